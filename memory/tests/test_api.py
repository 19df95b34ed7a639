"""Memory REST API: scoping, ingest, search, list, detail with history, delete, forget, bad input."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from core.identity.models import ApiClient
from memory.models import Fact

pytestmark = pytest.mark.django_db
BASE = "/api/v1/memory"


@pytest.fixture
def client_and_learner(make_learner):
    owner = ApiClient.objects.create(name="owner")
    learner = make_learner(client=owner)
    api = APIClient()
    api.force_authenticate(user=owner)
    return api, learner, owner


def test_ingest_facts_then_list_detail_search_delete(client_and_learner):
    api, learner, _ = client_and_learner
    r = api.post(f"{BASE}/learners/{learner.research_id}/facts", {"facts": [
        {"fact_type": "barrier", "content": "The learner gets distracted by notifications.", "confidence": 0.7},
        {"fact_type": "preference", "content": "The learner likes short video lessons."},
    ]}, format="json")
    assert r.status_code == 201, r.content
    assert len(r.json()["created"]) == 2
    listed = api.get(f"{BASE}/learners/{learner.research_id}/facts", {"fact_type": "barrier"}).json()
    assert listed["count"] == 1 and listed["results"][0]["content"].startswith("The learner gets distracted")
    fact_id = listed["results"][0]["id"]
    detail = api.get(f"{BASE}/facts/{fact_id}").json()
    assert detail["history"][0]["change"] == "created" and detail["history"][0]["service"] == "memory.api"
    hits = api.get(f"{BASE}/learners/{learner.research_id}/search",
                   {"q": "notifications distract me"}).json()["results"]
    assert hits[0]["fact_id"] == fact_id and hits[0]["parts"]["vector"] > 0.3
    assert fact_id in r.json()["created"] and fact_id == str(Fact.objects.get(content=detail["content"]).public_id)
    assert api.delete(f"{BASE}/facts/{fact_id}").status_code == 204
    assert not Fact.objects.filter(public_id=fact_id).exists()


def test_ingest_text_is_split_into_passages(client_and_learner):
    api, learner, _ = client_and_learner
    text = "I revise with flashcards every evening. " * 30
    r = api.post(f"{BASE}/learners/{learner.research_id}/facts", {"text": text}, format="json")
    assert r.status_code == 201
    contents = list(Fact.objects.filter(learner=learner).values_list("content", flat=True))
    assert contents and all(len(c) <= 500 for c in contents)


@pytest.mark.parametrize(("payload", "field"), [
    ({"facts": [{"fact_type": "insight", "content": "x" * 501}]}, "content"),
    ({"facts": [{"fact_type": "mood", "content": "ok"}]}, "fact_type"),
    ({"facts": [{"fact_type": "insight", "content": "ok", "confidence": "high"}]}, "confidence"),
    ({"facts": [{"fact_type": "insight", "content": "ok", "embedding": [0.1] * 383 + ["NaN"]}]}, "embedding"),
    ({"facts": [{"fact_type": "insight", "content": "ok", "embedding": [0.1] * 3}]}, "embedding"),
    ({}, "text"),
])
def test_bad_ingest_is_a_clear_400_and_writes_nothing(client_and_learner, payload, field):
    api, learner, _ = client_and_learner
    r = api.post(f"{BASE}/learners/{learner.research_id}/facts", payload, format="json")
    assert r.status_code == 400, r.content
    err = r.json()["error"]
    assert err["message"] and field in (err["field"] or "")
    assert not Fact.objects.exists()


def test_nan_embedding_in_raw_json_is_rejected(client_and_learner):
    api, learner, _ = client_and_learner
    body = '{"facts": [{"fact_type": "insight", "content": "ok", "embedding": [' + ",".join(["NaN"] * 384) + "]}]}"
    r = api.post(f"{BASE}/learners/{learner.research_id}/facts", body, content_type="application/json")
    assert r.status_code == 400 and not Fact.objects.exists()


def test_huge_query_is_400(client_and_learner):
    api, learner, _ = client_and_learner
    r = api.get(f"{BASE}/learners/{learner.research_id}/search", {"q": "x" * 10_240})
    assert r.status_code == 400 and r.json()["error"]["field"] == "q"


@pytest.mark.parametrize("extra", [{}, {"tier": "hot"}], ids=["unfiltered", "filtered"])
@pytest.mark.parametrize("params, field", [
    ({"q": ""}, "q"), ({}, "q"), ({"q": "x", "limit": 0}, "limit"), ({"q": "x", "limit": 10_000}, "limit"),
    ({"q": "x", "touch": "maybe"}, "touch")])
def test_search_parameters_are_checked_the_same_with_and_without_filters(client_and_learner, params, field, extra):
    """A search without filters is validated by the search's own fields only (memory.api.views):
    the same errors as the filtered form."""
    api, learner, _ = client_and_learner
    r = api.get(f"{BASE}/learners/{learner.research_id}/search", {**params, **extra})
    assert r.status_code == 400 and r.json()["error"]["field"] == field, r.content


def test_a_filter_beside_the_search_parameters_still_filters(client_and_learner):
    api, learner, _ = client_and_learner
    api.post(f"{BASE}/learners/{learner.research_id}/facts", {"facts": [
        {"fact_type": "barrier", "content": "Notifications on my phone distract me."},
        {"fact_type": "preference", "content": "I like my phone's notifications off while I study."}]}, format="json")
    url = f"{BASE}/learners/{learner.research_id}/search"
    plain = api.get(url, {"q": "phone notifications", "touch": "false"}).json()["results"]
    assert {h["fact_type"] for h in plain} == {"barrier", "preference"}
    filtered = api.get(url, {"q": "phone notifications", "touch": "false", "fact_type": "barrier"}).json()["results"]
    assert [h["fact_type"] for h in filtered] == ["barrier"]
    assert api.get(url, {"q": "phone", "fact_type": "nonsense"}).json()["error"]["field"] == "fact_type"


def test_other_clients_learner_is_404_and_global_search_is_staff_only(client_and_learner, make_learner):
    api, _, _ = client_and_learner
    stranger = make_learner()
    Fact.objects.create(learner=stranger, fact_type="insight", content="secret", content_hash="h",
                        last_accessed_at="2026-01-01T00:00:00Z")
    assert api.get(f"{BASE}/learners/{stranger.research_id}/facts").status_code == 404
    theirs = Fact.objects.get()
    for url in (f"{BASE}/facts/{theirs.public_id}", f"{BASE}/facts/{theirs.pk}", f"{BASE}/facts/not-a-uuid"):
        r = api.get(url)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", url
    assert api.delete(f"{BASE}/learners/{stranger.research_id}").status_code == 404
    assert api.get(f"{BASE}/search", {"q": "secret"}).status_code == 403
    staff = get_user_model().objects.create_user("staff", password="pw-123456", is_staff=True)
    admin_api = APIClient()
    admin_api.force_authenticate(user=staff)
    r = admin_api.get(f"{BASE}/search", {"q": "secret"})
    assert r.status_code == 200 and r.json()["results"][0]["content"] == "secret"


def test_forget_learner_deletes_memory_and_anonymises_telemetry(client_and_learner):
    api, learner, _ = client_and_learner
    api.post(f"{BASE}/learners/{learner.research_id}/facts", {"text": "I love jazz."}, format="json")
    ModelCall = apps.get_model("telemetry", "ModelCall")
    assert ModelCall.objects.filter(learner_id=learner.pk).exists()  # the embedding call
    r = api.delete(f"{BASE}/learners/{learner.research_id}")
    assert r.status_code == 200 and r.json()["deleted"]["facts"] == 1
    assert not Fact.objects.filter(learner=learner).exists()
    assert not ModelCall.objects.filter(learner_id=learner.pk).exists()
