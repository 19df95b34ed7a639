"""Memory API like the ones clients know: edit a fact (history, re-embedded), filters, paginated
lists with next/previous, supersession (kept, out of context and default search), and the
surprise queue's admin actions. Real MiniLM embeddings and the real database throughout."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory.models import Fact, FactHistory
from memory.selectors import build_context
from memory.tests.test_api import client_and_learner  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db
BASE = "/api/v1/memory"


@pytest.fixture
def owned(client_and_learner):  # noqa: F811 (the imported fixture, requested by name)
    api, learner, _ = client_and_learner
    return api, learner


def _add(api, learner, *facts: tuple[str, str]) -> list[str]:
    """The new facts' ids (public UUIDs, as the API returns them)."""
    r = api.post(f"{BASE}/learners/{learner.research_id}/facts",
                 {"facts": [{"fact_type": t, "content": c} for t, c in facts]}, format="json")
    assert r.status_code == 201, r.content
    return r.json()["created"]


def _search(api, learner, q: str, **params) -> list[dict]:
    r = api.get(f"{BASE}/learners/{learner.research_id}/search", {"q": q, **params})
    assert r.status_code == 200, r.content
    return r.json()["results"]


def test_patch_rewrites_the_text_writes_history_and_reembeds(owned):
    api, learner = owned
    [fact_id] = _add(api, learner, ("preference", "The learner studies in the morning before work."))
    old_vector = list(Fact.objects.get(public_id=fact_id).embedding)
    r = api.patch(f"{BASE}/facts/{fact_id}", {"content": "The learner practises the cello every evening.",
                                             "fact_type": "progress"}, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["content"] == "The learner practises the cello every evening." and body["fact_type"] == "progress"
    assert body["learner"] == str(learner.research_id)
    update = body["history"][-1]
    assert update["change"] == "updated" and update["service"] == "memory.api"
    assert update["before"]["content"].startswith("The learner studies in the morning")
    assert update["after"]["reembedded"] is True
    assert list(Fact.objects.get(public_id=fact_id).embedding) != old_vector
    hits = _search(api, learner, "cello practice")
    assert hits[0]["fact_id"] == fact_id and hits[0]["parts"]["vector"] > 0.4, hits
    # The history endpoint returns the same rows.
    history = api.get(f"{BASE}/facts/{fact_id}/history").json()
    assert [h["change"] for h in history] == ["created", "updated"]


def test_patch_bad_input_and_duplicates_change_nothing(owned):
    api, learner = owned
    a, _ = _add(api, learner, ("insight", "The learner likes podcasts."), ("barrier", "The learner has no desk."))
    for payload, status, field in [({}, 400, "content"), ({"fact_type": "mood"}, 400, "fact_type"),
                                   ({"content": "x" * 501}, 400, "content"),
                                   ({"content": "The learner has no desk."}, 409, "content")]:
        r = api.patch(f"{BASE}/facts/{a}", payload, format="json")
        assert r.status_code == status, (payload, r.content)
        assert r.json()["error"]["field"] == field
    fact = Fact.objects.get(public_id=a)
    assert (fact.content, fact.fact_type) == ("The learner likes podcasts.", "insight")
    assert FactHistory.objects.filter(fact__public_id=a).count() == 1


def test_list_filters_and_pagination_links(owned, make_message):
    api, learner = owned
    ids = _add(api, learner, ("insight", "The learner keeps the phone in another room while revising."),
               ("insight", "Flashcards work well for the learner's vocabulary."),
               ("insight", "The learner's sister helps with pronunciation."),
               ("insight", "Library afternoons are the learner's quietest hours."),
               ("insight", "Podcasts on the commute fill the learner's gaps in listening."))
    assert len(ids) == 5
    _add(api, learner, ("barrier", "The learner is tired after night shifts."))
    message = make_message(learner, "I keep my phone in another room")
    Fact.objects.filter(public_id=ids[0]).update(source_message=message, source_agent="extractor", tier="warm",
                                          created_at=timezone.now() - timedelta(days=10))
    url = f"{BASE}/learners/{learner.research_id}/facts"
    page = api.get(url, {"limit": 2}).json()
    assert page["count"] == 6 and len(page["results"]) == 2 and page["previous"] is None
    assert "offset=2" in page["next"]
    second = api.get(page["next"]).json()
    assert second["previous"] and len(second["results"]) == 2
    assert api.get(url, {"fact_type": "barrier"}).json()["count"] == 1
    assert [f["id"] for f in api.get(url, {"source_agent": "extractor"}).json()["results"]] == [ids[0]]
    by_conversation = api.get(url, {"conversation": str(message.conversation.public_id)}).json()["results"]
    assert [f["id"] for f in by_conversation] == [ids[0]]
    assert by_conversation[0]["source_conversation_id"] == str(message.conversation.public_id)
    assert by_conversation[0]["source_message_id"] == str(message.public_id)  # the message's public id too
    assert api.get(url, {"conversation": message.conversation_id}).status_code == 400  # the key is not an id
    assert api.get(url, {"tier": "warm"}).json()["count"] == 1
    week_ago = (timezone.now() - timedelta(days=7)).isoformat()
    assert api.get(url, {"created_before": week_ago}).json()["count"] == 1
    assert api.get(url, {"created_after": week_ago}).json()["count"] == 5
    bad = api.get(url, {"created_after": "yesterday"})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "created_after"
    backwards = api.get(url, {"created_after": week_ago, "created_before": week_ago})
    assert backwards.status_code == 400 and backwards.json()["error"]["field"] == "created_before"
    # Search takes the same filters.
    hits = _search(api, learner, "tired night shifts", fact_type="insight")
    assert hits and all(h["fact_type"] == "insight" for h in hits)
    [hit] = _search(api, learner, "phone", source_agent="extractor")
    assert hit["fact_id"] == ids[0]
    assert hit["source"] == {"message_id": str(message.public_id), "agent": "extractor",
                             "conversation_id": str(message.conversation.public_id)}


def test_supersede_keeps_the_fact_but_hides_it_from_context_and_default_search(owned):
    api, learner = owned
    old, new = _add(api, learner, ("preference", "The learner studies Spanish on Tuesday evenings."),
                    ("preference", "The learner moved Spanish practice to Saturday mornings."))
    r = api.post(f"{BASE}/facts/{old}/supersede", {"superseded_by": new}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["superseded_by_id"] == new and r.json()["valid_to"]
    assert [h["change"] for h in r.json()["history"]] == ["created", "superseded"]
    assert FactHistory.objects.filter(fact__public_id=new, change="supersedes").exists()
    assert Fact.objects.filter(public_id=old).exists(), "superseded, never deleted"

    assert "Tuesday" not in build_context(learner.pk) and "Saturday" in build_context(learner.pk)
    default = [h["fact_id"] for h in _search(api, learner, "when does the learner study Spanish")]
    assert old not in default and new in default
    every = _search(api, learner, "when does the learner study Spanish", include_superseded="true")
    assert {h["fact_id"]: h["superseded_by"] for h in every}[old] == new
    listed = api.get(f"{BASE}/learners/{learner.research_id}/facts").json()
    assert [f["id"] for f in listed["results"]] == [new]
    assert api.get(f"{BASE}/learners/{learner.research_id}/facts", {"include_superseded": "true"}).json()["count"] == 2

    # The superseded fact is history: it cannot be edited, nor replace anything.
    assert api.patch(f"{BASE}/facts/{old}", {"content": "edited"}, format="json").status_code == 409
    assert api.post(f"{BASE}/facts/{new}/supersede", {"superseded_by": old}, format="json").status_code == 409
    assert api.post(f"{BASE}/facts/{new}/supersede", {"superseded_by": new}, format="json").status_code == 400


def test_supersede_by_another_learners_fact_is_404(owned, make_learner):
    api, learner = owned
    [mine] = _add(api, learner, ("insight", "The learner reads before bed."))
    other = make_learner()
    theirs = Fact.objects.create(learner=other, fact_type="insight", content="someone else", content_hash="x",
                                 last_accessed_at=timezone.now())
    r = api.post(f"{BASE}/facts/{mine}/supersede", {"superseded_by": str(theirs.public_id)}, format="json")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert api.patch(f"{BASE}/facts/{theirs.public_id}", {"content": "mine now"}, format="json").status_code == 404
    # The integer key (of one's own fact too) is not an id: a 400 naming the field.
    r = api.post(f"{BASE}/facts/{mine}/supersede", {"superseded_by": theirs.pk}, format="json")
    assert r.status_code == 400 and r.json()["error"]["field"] == "superseded_by"
    assert Fact.objects.get(public_id=mine).superseded_by_id is None
    assert Fact.objects.get(pk=theirs.pk).content == "someone else"


def _surprise(learner, old_text: str, new_text: str) -> tuple[Fact, Fact]:
    now = timezone.now()
    old = Fact.objects.create(learner=learner, fact_type="preference", content=old_text, content_hash=old_text,
                              last_accessed_at=now)
    new = Fact.objects.create(learner=learner, fact_type="preference", content=new_text, content_hash=new_text,
                              last_accessed_at=now, surprise=True, conflicts_with=old,
                              surprise_reason="opposite:morning/evening")
    return old, new


@pytest.mark.parametrize(("action", "old_valid", "new_valid"), [
    ("new_replaces_old", False, True), ("keep_both", True, True), ("reject_new", True, False)])
def test_surprise_queue_admin_actions(client, learner, action, old_valid, new_valid):
    old, new = _surprise(learner, "The learner prefers mornings.", "The learner prefers evenings.")
    admin = get_user_model().objects.create_superuser("reviewer", "r@example.org", "pw-reviewer-123")
    client.force_login(admin)
    queue = client.get("/admin/memory/surprisefact/")
    assert queue.status_code == 200 and action in queue.content.decode()
    r = client.post("/admin/memory/surprisefact/", {"action": action, "_selected_action": [new.pk]})
    assert r.status_code == 302
    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.superseded_by_id is None, new.superseded_by_id is None) == (old_valid, new_valid)
    assert not new.surprise, "resolved: out of the queue"
    assert FactHistory.objects.filter(fact=new, change="surprise_resolved", service="memory.admin").exists()
    context = build_context(learner.pk)
    assert ("mornings" in context, "evenings" in context) == (old_valid, new_valid)
    assert client.get("/admin/memory/surprisefact/").content.decode().count("The learner prefers evenings.") == 0


def test_surprise_actions_need_the_change_permission(client, learner):
    _, new = _surprise(learner, "The learner prefers tea.", "The learner prefers coffee.")
    auditor = get_user_model().objects.create_user("auditor-x", password="pw-auditor-123", is_staff=True)
    from django.contrib.auth.models import Permission

    auditor.user_permissions.add(Permission.objects.get(codename="view_surprisefact"))
    client.force_login(auditor)
    page = client.get("/admin/memory/surprisefact/").content.decode()
    assert "new_replaces_old" not in page
    client.post("/admin/memory/surprisefact/", {"action": "new_replaces_old", "_selected_action": [new.pk]})
    new.refresh_from_db()
    assert new.surprise and new.conflicts_with.superseded_by_id is None


def test_a_bad_item_inside_a_list_field_is_a_400_naming_its_path(owned):
    # Found by schemathesis once the schema typed `embedding`: list-item errors are keyed by
    # integers, which the error path builder used to look up as strings (a 500).
    api, learner = owned
    r = api.post(f"{BASE}/learners/{learner.research_id}/facts",
                 {"facts": [{"fact_type": "insight", "content": "ok", "embedding": ["x"] + [0.1] * 383}]},
                 format="json")
    assert r.status_code == 400, r.content
    assert r.json()["error"]["field"] == "facts.0.embedding.0"
    assert not Fact.objects.filter(learner=learner).exists()


def test_fact_and_hit_carry_the_batch_fields(owned):
    api, learner = owned
    [fact_id] = _add(api, learner, ("insight", "The learner revises irregular verbs with a friend."))
    Fact.objects.filter(public_id=fact_id).update(external_id="ext-1", metadata={"session": 3})
    fact = api.get(f"{BASE}/facts/{fact_id}").json()
    assert (fact["external_id"], fact["metadata"], fact["occurred_at"]) == ("ext-1", {"session": 3}, None)
    hit = _search(api, learner, "irregular verbs")[0]
    assert (hit["fact_id"], hit["external_id"], hit["metadata"]) == (fact_id, "ext-1", {"session": 3})


def test_the_coachs_own_search_leaves_superseded_facts_out(owned):
    """The selector every caller shares (the coach's memory tool calls it directly, not the API):
    a superseded fact is not current, so it is not found unless asked for."""
    from memory import revisions, selectors

    api, learner = owned
    old, new = (Fact.objects.get(public_id=i).pk for i in _add(
        api, learner, ("preference", "The learner studies Spanish on Monday mornings."),
        ("preference", "The learner now studies Spanish on Thursday evenings.")))
    revisions.fact_supersede(fact_id=old, by_fact_id=new, service="tests")
    found = [h["fact_id"] for h in selectors.search_memory(learner_id=learner.pk, query="when does the learner "
                                                                                        "study Spanish")]
    assert new in found and old not in found
    every = selectors.search_memory(learner_id=learner.pk, query="when does the learner study Spanish",
                                    include_superseded=True)
    assert old in [h["fact_id"] for h in every]


def test_search_with_touch_false_marks_nothing_accessed(owned):
    api, learner = owned
    [fact_id] = _add(api, learner, ("preference", "The learner likes flashcards on the bus."))
    before = Fact.objects.values_list("access_count", "last_accessed_at").get(public_id=fact_id)
    hits = _search(api, learner, "flashcards on the bus", touch="false")
    assert hits and hits[0]["fact_id"] == fact_id
    assert Fact.objects.values_list("access_count", "last_accessed_at").get(public_id=fact_id) == before
    _search(api, learner, "flashcards on the bus")
    assert Fact.objects.get(public_id=fact_id).access_count == before[0] + 1, "a plain search does count"
