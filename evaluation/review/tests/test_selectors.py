import datetime as dt

import pytest
from django.utils import timezone

from coaching.models import Message, Turn
from evaluation.review import selectors
from evaluation.review.models import DefectTag
from evaluation.review.services import defect_tag_create
from evaluation.review.tests import factories

pytestmark = pytest.mark.django_db


def test_conversation_audit_is_seven_queries_and_groups_by_turn(django_assert_num_queries):
    conversation = factories.conversation_with_turns(6)
    factories.conversation_with_turns(2)  # noise: another conversation's calls/facts must not leak in
    first = Turn.objects.filter(learner_message__conversation=conversation).order_by("id").first()
    defect_tag_create(turn_id=first.pk, category="verbosity", layer="model_choice")
    with django_assert_num_queries(7):
        data = selectors.conversation_audit(conversation_id=conversation.pk)
        # everything the template touches is already loaded
        for row in data.turns:
            _ = [(t.tagged_by, t.category) for t in row.tags]
            _ = [(f.conflicts_with, [m.entity.display_name for m in f.mentions.all()]) for f in row.facts]
            _ = row.tool_calls, row.guard_events, row.tokens, row.reply.content
    assert [row.index for row in data.turns] == [1, 2, 3, 4, 5, 6]
    assert all(len(row.calls) == 2 and len(row.facts) == 1 for row in data.turns)
    assert {c.trace_id for c in data.turns[0].calls} == {first.trace_id}
    assert [c.loop_iteration for c in data.turns[0].calls] == [0, 1]
    assert data.turns[0].tags[0].category == "verbosity" and data.total_tags == 1
    assert data.turns[2].facts[0].surprise and data.turns[2].facts[0].conflicts_with == data.turns[1].facts[0]
    assert data.turns[0].tool_calls[0]["name"] == "plan_read"
    assert data.turns[0].tokens == (601, 81)
    assert data.other_messages == []


def test_audit_keeps_messages_without_turn_records():
    conversation = factories.conversation_with_turns(1)
    orphan = Message.objects.create(conversation=conversation, role="learner", content="LEARNERSAID orphan")
    system = Message.objects.create(conversation=conversation, role="system", content="welcome")
    data = selectors.conversation_audit(conversation_id=conversation.pk)
    assert [row.learner_message for row in data.turns][-1] == orphan
    assert data.turns[-1].turn is None and data.turns[-1].anchor == f"message-{orphan.pk}"
    assert data.other_messages == [system]


def test_defect_report_counts_per_week_category_and_layer():
    conversation = factories.conversation_with_turns(4)
    turns = list(Turn.objects.filter(learner_message__conversation=conversation).order_by("id"))
    now = timezone.now()
    plan = [("grounding", "architecture", 0), ("dishonest_state", "architecture", 0),
            ("gate_without_answer", "architecture", 1), ("routing_override", "architecture", 2),
            ("verbosity", "prompt", 2), ("grounding", "architecture", 20)]  # 20 weeks ago: outside 12
    for i, (category, layer, weeks_ago) in enumerate(plan):
        tag = defect_tag_create(turn_id=turns[i % 4].pk, category=category, layer=layer)
        DefectTag.objects.filter(pk=tag.pk).update(created_at=now - dt.timedelta(weeks=weeks_ago))
    report = selectors.defect_report(weeks=12, now=now)
    assert len(report.weeks) == 12 and report.weeks[-1].weekday() == 0
    assert report.total == 5
    assert report.layer_totals["architecture"] == 4 and report.layer_totals["prompt"] == 1
    assert report.weekly_totals[-1] == 2 and report.weekly_totals[-2] == 1 and report.weekly_totals[-3] == 2
    grounding = next(r for r in report.matrix if r["category"] == "grounding")
    assert grounding["cells"] == [1, 0, 0, 0] and grounding["total"] == 1
    wide = selectors.defect_report(weeks=30, now=now)
    assert wide.total == 6
