"""Writes of the review console. Keyword-only, atomic, and each leaves a `DefectTagHistory` row."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from coaching.models import Turn
from core.errors import ApplicationError
from evaluation.review.models import DefectCategory, DefectTag, DefectTagHistory, RootCauseLayer

DEFECT_EVAL_SET_NAME = "defect-review"


@transaction.atomic
def defect_tag_create(*, turn_id: int, category: str, layer: str, note: str = "",
                      tagged_by: AbstractBaseUser | None = None) -> DefectTag:
    if category not in DefectCategory.values:
        raise ApplicationError(f"unknown defect category {category!r}")
    if layer not in RootCauseLayer.values:
        raise ApplicationError(f"unknown root-cause layer {layer!r}")
    if not Turn.objects.filter(pk=turn_id).exists():
        raise ApplicationError(f"turn {turn_id} does not exist")
    tag = DefectTag.objects.create(turn_id=turn_id, category=category, layer=layer, note=note.strip(),
                                   tagged_by=tagged_by)
    DefectTagHistory.objects.create(tag=tag, tag_pk=tag.pk, action="created", actor=tagged_by,
                                    data={"turn_id": turn_id, "category": category, "layer": layer})
    return tag


@transaction.atomic
def defect_tag_delete(*, tag_id: int, actor: AbstractBaseUser | None = None) -> None:
    tag = DefectTag.objects.select_for_update().get(pk=tag_id)
    DefectTagHistory.objects.create(tag=None, tag_pk=tag.pk, action="deleted", actor=actor,
                                    data={"turn_id": tag.turn_id, "category": tag.category, "layer": tag.layer})
    tag.delete()


@dataclass(frozen=True)
class SentToEval:
    eval_set_id: int
    transcripts: int
    tags: int


@transaction.atomic
def defect_tags_send_to_eval_set(*, tag_ids: list[int], eval_set_id: int | None = None,
                                 actor: AbstractBaseUser | None = None) -> SentToEval:
    """Freeze the conversation of every tagged turn into an evaluation set (one transcript per
    conversation, tagged with the defect categories), so a fix can be checked against exactly the
    turns that showed the defect. Without an explicit set, a "defect-review" set is used/created."""
    from evaluation.models import EvalSet
    from evaluation.services.sets import transcript_freeze_from_conversation

    if eval_set_id is None:
        eval_set = EvalSet.objects.filter(name=DEFECT_EVAL_SET_NAME).order_by("-version").first()
        if eval_set is None:
            eval_set = EvalSet.objects.create(
                name=DEFECT_EVAL_SET_NAME, description="Conversations with turns tagged in the defect review.")
    else:
        eval_set = EvalSet.objects.get(pk=eval_set_id)

    tags = list(DefectTag.objects.filter(pk__in=tag_ids)
                .select_related("turn__learner_message").order_by("id"))
    by_conversation: dict[int, list[DefectTag]] = {}
    for tag in tags:
        by_conversation.setdefault(tag.turn.learner_message.conversation_id, []).append(tag)
    history = []
    for conversation_id, conv_tags in by_conversation.items():
        categories = sorted({t.category for t in conv_tags})
        transcript = transcript_freeze_from_conversation(
            conversation_id=conversation_id, eval_set_id=eval_set.pk,
            slug=f"defect-conversation-{conversation_id}", tags=["frozen", "defect-review", *categories])
        DefectTag.objects.filter(pk__in=[t.pk for t in conv_tags]).update(transcript=transcript)
        history += [DefectTagHistory(tag=t, tag_pk=t.pk, action="sent_to_eval", actor=actor,
                                     data={"eval_set_id": eval_set.pk, "transcript_id": transcript.pk})
                    for t in conv_tags]
    DefectTagHistory.objects.bulk_create(history)
    return SentToEval(eval_set_id=eval_set.pk, transcripts=len(by_conversation), tags=len(tags))
