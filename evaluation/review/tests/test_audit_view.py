import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from coaching.models import Turn
from evaluation.review.models import DefectTag, DefectTagHistory
from evaluation.review.services import defect_tag_create
from evaluation.review.tests import factories

pytestmark = pytest.mark.django_db

# Session + user + the audit selector's 7 queries (9 for a superuser) + 2 for an auditor's permissions. What
# matters is that it is a constant: the N-vs-3N test below proves it does not grow with turns.
AUDIT_MAX_QUERIES = 11


def audit_url(conversation):
    return reverse("admin:review_conversationaudit_audit", args=[conversation.pk])


def count_queries(client, url):
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries), response


@pytest.mark.parametrize("who", ["superuser", "auditor"])
def test_audit_query_count_does_not_grow_with_turns(request, client, who):
    user = request.getfixturevalue(who)
    client.force_login(user)
    small, large = factories.conversation_with_turns(4), factories.conversation_with_turns(12)
    for conv in (small, large):  # a tag per turn: the tags are prefetched, not queried per turn
        for turn in Turn.objects.filter(learner_message__conversation=conv):
            defect_tag_create(turn_id=turn.pk, category="verbosity", layer="prompt", tagged_by=user)
    client.get(audit_url(small))  # warm caches (content types, permissions)
    n_small, _ = count_queries(client, audit_url(small))
    n_large, response = count_queries(client, audit_url(large))
    assert n_small == n_large
    assert response.content.decode().count('class="audit-turn"') == 12


def test_twenty_turn_audit_renders_in_bounded_queries(client, superuser, django_assert_max_num_queries):
    conversation = factories.conversation_with_turns(20)
    client.force_login(superuser)
    with django_assert_max_num_queries(AUDIT_MAX_QUERIES):
        response = client.get(audit_url(conversation))
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('class="audit-turn"') == 20
    assert html.count('id="call-') == 40


def test_audit_shows_every_part_of_a_turn_with_links(client, superuser):
    conversation = factories.conversation_with_turns(3)
    turn = Turn.objects.filter(learner_message__conversation=conversation).order_by("id").last()
    defect_tag_create(turn_id=turn.pk, category="grounding", layer="architecture", note="made up a session")
    client.force_login(superuser)
    html = client.get(audit_url(conversation)).content.decode()
    tag = f"c{conversation.pk}"
    for text in (f"LEARNERSAID {tag} #2", f"COACHSAID {tag} #2", f"CONTEXTTEXT {tag} #2", f"PROMPTTEXT {tag} #2.1",
                 f"FACTTEXT {tag} #2", "ENTITYNAME Bach", "TOOLARGTEXT", "plan_active", "learner has an active plan",
                 "length_cap", "truncated", "tiny-1b", "⚠ surprise", "Grounding / fabrication"):
        assert text in html, text
    # anchors and two-way links: turn → telemetry rows / trace / call rows / fact rows
    assert f'id="turn-{turn.pk}"' in html
    assert f"/admin/telemetry/modelcall/?trace_id={turn.trace_id}" in html
    assert reverse("admin:telemetry_modelcall_trace", args=[turn.trace_id]) in html
    assert f"/admin/memory/fact/?source_message__id__exact={turn.learner_message_id}" in html
    call_links = re.findall(r'href="(/admin/telemetry/modelcall/\d+/change/)"', html)
    assert len(call_links) == 6
    fact_links = set(re.findall(r'href="(/admin/memory/fact/\d+/change/)"', html))
    assert len(fact_links) == 3


def test_audit_shows_how_each_message_was_read_with_the_learners_words(client, superuser):
    """The reading is where a wrong write starts: the act, who read it, and each value beside the
    learner's words it came from, so an auditor can see which words led to which write."""
    conversation = factories.conversation_with_turns(2)
    client.force_login(superuser)
    html = client.get(audit_url(conversation)).content.decode()
    tag = f"c{conversation.pk}"
    assert html.count("<strong>Reading</strong>") == 2
    for text in ("act <code>move</code>", "read by rules+model", "names a session and a new day", "model 812 ms",
                 "<code>days</code>", f"“SPANTEXT {tag} #1”", f"refused: goal: REFUSEDTEXT {tag} #1"):
        assert text in html, text


def test_links_from_telemetry_and_fact_rows_resolve_to_the_turn(client, superuser):
    conversation = factories.conversation_with_turns(2)
    turn = Turn.objects.filter(learner_message__conversation=conversation).order_by("id").first()
    client.force_login(superuser)
    for url in (reverse("admin:telemetry_modelcall_changelist") + f"?trace_id={turn.trace_id}",
                reverse("admin:memory_fact_changelist") + f"?source_message__id__exact={turn.learner_message_id}",
                reverse("admin:coaching_turn_changelist"), reverse("admin:identity_message_changelist")):
        response = client.get(url)
        assert response.status_code == 200, url
        assert "/admin/review/conversationaudit/goto/?" in response.content.decode()
    goto = reverse("admin:review_conversationaudit_goto")
    response = client.get(goto, {"trace": turn.trace_id})
    assert response.status_code == 302
    assert response["Location"] == f"{audit_url(conversation)}#turn-{turn.pk}"
    fact = turn.learner_message.memory_facts.get()
    response = client.get(goto, {"fact": fact.pk})
    assert response["Location"] == f"{audit_url(conversation)}#message-{turn.learner_message_id}"
    response = client.get(goto, {"message": turn.reply_id})  # a reply lands on its learner message
    assert response["Location"] == f"{audit_url(conversation)}#message-{turn.learner_message_id}"
    assert client.get(goto, {"trace": "nope"}).status_code == 404
    assert client.get(goto, {"message": "x"}).status_code == 404
    html = client.get(reverse("admin:identity_conversation_changelist")).content.decode()
    assert audit_url(conversation) in html
    # the defect-tag changelist filtered to this conversation (linked from the audit page)
    tags = reverse("admin:review_defecttag_changelist")
    assert client.get(tags, {"turn__learner_message__conversation__id__exact": conversation.pk}).status_code == 200


def test_tag_a_defect_from_the_audit_page(client, auditor):
    conversation = factories.conversation_with_turns(2)
    turn = Turn.objects.filter(learner_message__conversation=conversation).order_by("id").first()
    client.force_login(auditor)
    html = client.get(audit_url(conversation)).content.decode()
    assert 'class="tag-form"' in html
    response = client.post(reverse("admin:review_conversationaudit_tag", args=[conversation.pk]),
                           {"turn_id": turn.pk, "category": "gate_without_answer", "layer": "architecture",
                            "note": "onboarding advanced on 'idk'"})
    assert response.status_code == 302
    assert response["Location"].endswith(f"#turn-{turn.pk}")
    tag = DefectTag.objects.get()
    assert (tag.turn_id, tag.category, tag.layer, tag.tagged_by_id) == (turn.pk, "gate_without_answer",
                                                                        "architecture", auditor.pk)
    assert DefectTagHistory.objects.filter(tag=tag, action="created", actor=auditor).exists()
    html = client.get(audit_url(conversation)).content.decode()
    assert "Gate passed without a genuine answer" in html


def test_tagging_a_turn_of_another_conversation_is_refused(client, auditor):
    one, two = factories.conversation_with_turns(1), factories.conversation_with_turns(1)
    foreign = Turn.objects.get(learner_message__conversation=two)
    client.force_login(auditor)
    response = client.post(reverse("admin:review_conversationaudit_tag", args=[one.pk]),
                           {"turn_id": foreign.pk, "category": "other", "layer": "prompt"})
    assert response.status_code == 404
    assert not DefectTag.objects.exists()


def test_invalid_tag_form_creates_nothing(client, auditor):
    conversation = factories.conversation_with_turns(1)
    turn = Turn.objects.get(learner_message__conversation=conversation)
    client.force_login(auditor)
    response = client.post(reverse("admin:review_conversationaudit_tag", args=[conversation.pk]),
                           {"turn_id": turn.pk, "category": "made-up", "layer": "prompt"})
    assert response.status_code == 302
    assert not DefectTag.objects.exists()


def test_tagging_needs_the_add_permission(client, roles):
    viewer = factories.user()
    from django.contrib.auth.models import Permission

    viewer.user_permissions.add(Permission.objects.get(codename="view_conversationaudit"))
    conversation = factories.conversation_with_turns(1)
    turn = Turn.objects.get(learner_message__conversation=conversation)
    client.force_login(viewer)
    html = client.get(audit_url(conversation)).content.decode()
    assert 'class="tag-form"' not in html
    response = client.post(reverse("admin:review_conversationaudit_tag", args=[conversation.pk]),
                           {"turn_id": turn.pk, "category": "other", "layer": "prompt"})
    assert response.status_code == 403


def test_audit_of_missing_conversation_is_404(client, superuser):
    client.force_login(superuser)
    assert client.get(reverse("admin:review_conversationaudit_audit", args=[999999])).status_code == 404


def test_conversation_audit_changelist_links_to_audit(client, superuser):
    conversation = factories.conversation_with_turns(2)
    client.force_login(superuser)
    html = client.get(reverse("admin:review_conversationaudit_changelist")).content.decode()
    assert audit_url(conversation) in html
    response = client.get(reverse("admin:review_conversationaudit_change", args=[conversation.pk]))
    assert response.status_code == 302 and response["Location"] == audit_url(conversation)


def test_audit_tells_the_code_written_part_of_a_reply_from_the_models(client, superuser):
    """Root-cause audits need to know whose words a reply is: the model's, code's, or both."""
    conversation = factories.conversation_with_turns(3)
    turns = list(Turn.objects.filter(learner_message__conversation=conversation).select_related("reply")
                 .order_by("id"))
    Turn.objects.filter(pk=turns[1].pk).update(code_text="CODEWROTE the next question?")
    Turn.objects.filter(pk=turns[2].pk).update(code_text=turns[2].reply.content, outcome="fallback")
    client.force_login(superuser)
    html = client.get(audit_url(conversation)).content.decode()
    assert "all of it from the model" in html  # turn 0: no code text
    assert "written by code: <q class=\"audit-code-text\">CODEWROTE the next question?</q>" in html
    assert "all of it written by code (outcome fallback)" in html
