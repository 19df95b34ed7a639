import pytest

from coaching.models import Turn
from core.errors import ApplicationError
from evaluation.models import EvalSet, Transcript
from evaluation.review import services
from evaluation.review.models import DefectTag, DefectTagHistory
from evaluation.review.tests import factories

pytestmark = pytest.mark.django_db


def _turns(conversation):
    return list(Turn.objects.filter(learner_message__conversation=conversation).order_by("id"))


def test_defect_tag_create_writes_tag_and_audit_row():
    turn = _turns(factories.conversation_with_turns(1))[0]
    staff = factories.user()
    tag = services.defect_tag_create(turn_id=turn.pk, category="scaffold_leak", layer="model_choice",
                                     note="  'Here is my plan for you…' leaked  ", tagged_by=staff)
    assert tag.note == "'Here is my plan for you…' leaked"
    history = DefectTagHistory.objects.get()
    assert (history.tag, history.action, history.actor, history.data["category"]) == (
        tag, "created", staff, "scaffold_leak")


@pytest.mark.parametrize("kwargs", [{"category": "nope", "layer": "prompt"},
                                    {"category": "other", "layer": "nope"}])
def test_defect_tag_create_rejects_unknown_values(kwargs):
    turn = _turns(factories.conversation_with_turns(1))[0]
    with pytest.raises(ApplicationError):
        services.defect_tag_create(turn_id=turn.pk, **kwargs)
    assert not DefectTag.objects.exists() and not DefectTagHistory.objects.exists()


def test_defect_tag_create_rejects_missing_turn():
    with pytest.raises(ApplicationError):
        services.defect_tag_create(turn_id=987654, category="other", layer="prompt")


def test_delete_keeps_the_audit_row():
    turn = _turns(factories.conversation_with_turns(1))[0]
    tag = services.defect_tag_create(turn_id=turn.pk, category="other", layer="prompt")
    services.defect_tag_delete(tag_id=tag.pk)
    assert not DefectTag.objects.exists()
    assert list(DefectTagHistory.objects.order_by("id").values_list("action", "tag_pk")) == [
        ("created", tag.pk), ("deleted", tag.pk)]


def test_send_to_eval_set_freezes_one_transcript_per_conversation():
    a, b = factories.conversation_with_turns(3), factories.conversation_with_turns(2)
    ta, tb = _turns(a), _turns(b)
    tags = [services.defect_tag_create(turn_id=ta[0].pk, category="grounding", layer="architecture"),
            services.defect_tag_create(turn_id=ta[2].pk, category="verbosity", layer="prompt"),
            services.defect_tag_create(turn_id=tb[1].pk, category="continuity_loss", layer="data_model")]
    result = services.defect_tags_send_to_eval_set(tag_ids=[t.pk for t in tags])
    assert (result.transcripts, result.tags) == (2, 3)
    eval_set = EvalSet.objects.get(pk=result.eval_set_id)
    assert eval_set.name == services.DEFECT_EVAL_SET_NAME
    transcript = Transcript.objects.get(eval_set=eval_set, frozen_from_conversation_id=a.pk)
    assert {"defect-review", "grounding", "verbosity"} <= set(transcript.tags)
    assert len(transcript.learner_turns) == 3
    assert set(DefectTag.objects.values_list("transcript_id", flat=True)) == set(
        Transcript.objects.filter(eval_set=eval_set).values_list("id", flat=True))
    assert DefectTagHistory.objects.filter(action="sent_to_eval").count() == 3
    # idempotent per conversation: sending again reuses the set and the transcripts
    again = services.defect_tags_send_to_eval_set(tag_ids=[t.pk for t in tags])
    assert again.eval_set_id == eval_set.pk and Transcript.objects.filter(eval_set=eval_set).count() == 2
