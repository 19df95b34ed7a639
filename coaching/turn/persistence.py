"""Storing a turn: the Turn record (routing, context, guard events, tool calls, timings) and the
reply, exactly once, with the memory-extraction task enqueued in the same transaction."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from coaching.models import Message, MessageStatus, Role, StudyArm, Turn
from coaching.services import message_status_set
from coaching.turn import prompts
from coaching.turn.router import ONBOARDING, PROFILE_CHANGES
from coaching.turn.state import Run
from coaching.turn.tools import ToolBox
from core.outbox.services import outbox_enqueue
from memory.rules import request_to_coach


def record_turn(run: Run, decision, context: str, toolbox: ToolBox, *, reply: Message | None, outcome: str) -> Turn:
    turn, _ = Turn.objects.update_or_create(
        learner_message=run.message,
        defaults={"reply": reply, "specialist": decision.specialist, "rule": decision.rule,
                  "reason": decision.reason[:300], "trace_id": run.trace_id,
                  "prompt_version": run.prompt_version or prompts.PROMPT_VERSION,
                  "context_snapshot": context, "guard_events": run.guard_events,
                  "reading": run.reading.as_dict() if run.reading is not None else {}, "tool_calls": toolbox.calls,
                  "offered_options": run.offered_options, "code_text": run.code_text, "timings": run.timings,
                  "model_calls": run.model_calls,
                  "outcome": outcome},
    )
    return turn


def persist(run: Run, decision, context: str, toolbox: ToolBox, content: str) -> Message:
    """Store the reply exactly once: under a row lock on the learner message, a second runner for
    the same message (a retried request) finds the reply and stores nothing."""
    with transaction.atomic():
        locked = Message.objects.select_for_update().get(pk=run.message.pk)
        existing = locked.replies.filter(role=Role.COACH).order_by("id").first()
        if existing is not None:
            return existing
        reply = Message.objects.create(conversation_id=locked.conversation_id, role=Role.COACH, content=content,
                                       specialist=decision.specialist, reply_to=locked, trace_id=run.trace_id)
        message_status_set(message=locked, status=MessageStatus.ANSWERED, specialist=decision.specialist,
                           trace_id=run.trace_id)
        run.message.status = locked.status
        record_turn(run, decision, context, toolbox, reply=reply, outcome=run.outcome)
        # A message that only asks the coach to act ("can we plan my week?") holds no fact about the
        # learner (memory.rules.request_to_coach): no extraction is sent for it, rather than a
        # model call whose every fact would be dropped. Onboarding answers are stored in the
        # profile; a profile change after onboarding is read for facts like any other message.
        remembered = decision.specialist != ONBOARDING or decision.rule in PROFILE_CHANGES
        if (remembered and run.learner.study_arm == StudyArm.COACH
                and settings.BLOOM_MEMORY_EXTRACTION and not request_to_coach(locked.content)):
            # Fire-and-forget memory extraction, sent after commit; the reply never waits for it.
            outbox_enqueue(task_name="memory.extract_facts", args=[locked.pk], queue="memory",
                           dedup_key=f"extract:{locked.pk}")
    return reply
