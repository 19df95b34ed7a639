"""Reads about the state of one conversation that the engine's code decisions need: how many
answers in a row the onboarding gate has rejected, the coach's recent replies (loop guard), the
learner's earlier words (what they said about days, for a plan), the writes of the previous turn
(undo) and the sessions a learner has missed (reschedule options). Kept apart from selectors.py
because these read the engine's own Turn records."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from coaching.models import Conversation, Learner, Message, PlannedSession, Role, SessionStatus, Turn


def _turns_before(*, conversation: Conversation, before: Message, limit: int) -> list[Turn]:
    return list(Turn.objects.filter(learner_message__conversation=conversation, learner_message_id__lt=before.id)
                .order_by("-learner_message_id")[:limit])


def onboarding_rejections_in_row(*, conversation: Conversation, before: Message, step: str) -> int:
    """Consecutive earlier turns whose onboarding answer at `step` the gate rejected. A turn that
    answered another step early ("2 hours a week" at the area question) and left `step` waiting
    neither counts nor ends the run: the question was asked and is still unanswered."""
    count = 0
    for turn in _turns_before(conversation=conversation, before=before, limit=10):
        events = [e for e in turn.guard_events or [] if e.get("kind") == "onboarding"]
        detail = str(events[0].get("detail", "")) if events else ""
        if detail.startswith(f"{step}: accepted") and (events[0].get("updates") or {}).get(
                "onboarding_step", step) == step:
            continue
        if not detail.startswith(f"{step}: rejected"):
            break
        count += 1
    return count


def coach_replies(*, conversation: Conversation, before: Message, limit: int = 30) -> list[str]:
    """The coach's earlier replies in this conversation, newest first."""
    return list(conversation.messages.filter(role=Role.COACH, id__lt=before.id).order_by("-id")
                .values_list("content", flat=True)[:limit])


def learner_texts(*, conversation: Conversation, before: Message, limit: int = 20) -> list[str]:
    """The learner's earlier messages in this conversation, newest first — but those read as a move
    or a cancel: a day named there is a session's ("bump wednesday's session to 7:30"), not a day
    the learner said they are free, which is what the reader looks for in earlier messages."""
    rows = (conversation.messages.filter(role=Role.LEARNER, id__lt=before.id).order_by("-id")
            .values_list("content", "turn__reading")[:limit])
    return [content for content, reading in rows if (reading or {}).get("act") not in ("move", "cancel")]


def previous_turn(*, conversation: Conversation, before: Message) -> Turn | None:
    turns = _turns_before(conversation=conversation, before=before, limit=1)
    return turns[0] if turns else None


MISSED_LOOKBACK_DAYS = 14


def sessions_missed(*, learner: Learner, now=None) -> list[PlannedSession]:
    """Sessions of the last two weeks that are over and were missed, skipped or never reported
    (oldest first): what a "can we move the sessions I missed?" question is about."""
    now = now or timezone.now()
    rows = PlannedSession.objects.filter(
        plan__learner=learner, planned_start__gte=now - timedelta(days=MISSED_LOOKBACK_DAYS), planned_start__lte=now,
        status__in=[SessionStatus.PLANNED, SessionStatus.MISSED, SessionStatus.SKIPPED],
    ).order_by("planned_start")
    return [s for s in rows if s.status != SessionStatus.PLANNED
            or s.planned_start + timedelta(minutes=s.duration_minutes) <= now]


def sessions_reportable(*, learner: Learner, now=None) -> list[PlannedSession]:
    """Sessions a "done"/"skipped" report could be about: planned (unreported) ones that started in
    the last 7 days or start within 12 hours, newest first."""
    now = now or timezone.now()
    return list(PlannedSession.objects.filter(
        plan__learner=learner, status=SessionStatus.PLANNED,
        planned_start__lte=now + timedelta(hours=12), planned_start__gte=now - timedelta(days=7),
    ).order_by("-planned_start"))
