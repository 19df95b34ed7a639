"""Reads. Client scoping lives HERE, in one place: every API lookup goes through a selector that
takes the client, so another client's ids resolve to "not found"."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

from django.core import signing
from django.db.models import QuerySet
from django.utils import timezone

from coaching.models import (
    CHAT_LINK_SALT,
    ApiClient,
    ChatLink,
    CheckIn,
    Conversation,
    Learner,
    LearnerProfile,
    Message,
    MessageStatus,
    Plan,
    PlannedSession,
    Role,
    SessionStatus,
    Turn,
)

HISTORY_LIMIT = 6  # short-term history: the last N messages of this conversation


def learners_for_client(*, client: ApiClient) -> QuerySet[Learner]:
    return Learner.objects.filter(client=client).select_related("profile")


def learner_get(*, client: ApiClient | None, research_id) -> Learner | None:
    """`client=None` is the staff/demo path (chat page behind staff login)."""
    qs = Learner.objects.select_related("profile", "client")
    if client is not None:
        qs = qs.filter(client=client)
    return qs.filter(research_id=research_id).first()


def conversation_get(*, client: ApiClient | None, public_id: UUID) -> Conversation | None:
    """A conversation by the public id clients know, scoped to the client (None: staff)."""
    qs = Conversation.objects.select_related("learner", "learner__profile", "learner__client")
    if client is not None:
        qs = qs.filter(learner__client=client)
    return qs.filter(public_id=public_id).first()


def conversation_latest(*, learner: Learner) -> Conversation | None:
    return learner.conversations.order_by("-created_at", "-id").first()


def messages_list(*, conversation: Conversation) -> QuerySet[Message]:
    # A reply names its learner message by that message's public id: joined, not a query per row.
    return conversation.messages.select_related("reply_to").order_by("created_at", "id")


def reply_for(*, message: Message) -> Message | None:
    return message.replies.filter(role=Role.COACH).select_related("reply_to").order_by("id").first()


def history_for(*, conversation: Conversation, before: Message, limit: int = HISTORY_LIMIT) -> list[Message]:
    """The last `limit` messages before `before` (oldest first). Unanswered learner messages are
    kept: the learner did say them."""
    rows = list(
        conversation.messages.filter(id__lt=before.id).exclude(role=Role.SYSTEM).order_by("-id")[:limit]
    )
    return rows[::-1]


def profile_get(*, learner: Learner) -> LearnerProfile:
    profile, _ = LearnerProfile.objects.get_or_create(learner=learner)
    return profile


def last_coach_turn(*, conversation: Conversation, before: Message) -> Turn | None:
    return (
        Turn.objects.filter(learner_message__conversation=conversation, learner_message_id__lt=before.id,
                            reply__isnull=False)
        .order_by("-learner_message_id").first()
    )


def sessions_upcoming(*, learner: Learner, limit: int = 10) -> list[PlannedSession]:
    now = timezone.now()
    return list(PlannedSession.objects.filter(plan__learner=learner, status=SessionStatus.PLANNED,
                                              planned_start__gte=now).order_by("planned_start")[:limit])


# The longest a session can be (coaching.services.plans checks it): how far back an overlap can start.
SESSION_MAX_MINUTES = 600


def session_overlapping(*, learner: Learner, start, minutes: int, moving: int | None = None) -> PlannedSession | None:
    """The learner's planned or done session a session of `minutes` at `start` would overlap (a
    learner studies one session at a time), other than `moving`; None when the time is free."""
    end = start + timedelta(minutes=minutes)
    nearby = (PlannedSession.objects.filter(plan__learner=learner,
                                            status__in=(SessionStatus.PLANNED, SessionStatus.COMPLETED),
                                            planned_start__lt=end,
                                            planned_start__gt=start - timedelta(minutes=SESSION_MAX_MINUTES))
              .exclude(pk=moving).order_by("planned_start"))
    return next((s for s in nearby if s.planned_start + timedelta(minutes=s.duration_minutes) > start), None)


def session_due_for_checkin(*, learner: Learner, now=None) -> PlannedSession | None:
    """The most recent planned session that has ended (start + duration) within the last 7 days and
    has no report. Deterministic: this, not the model, decides which session a report is about."""
    now = now or timezone.now()
    candidates = PlannedSession.objects.filter(
        plan__learner=learner, status=SessionStatus.PLANNED,
        planned_start__lte=now, planned_start__gte=now - timedelta(days=7),
    ).order_by("-planned_start")
    for session in candidates:
        if session.planned_start + timedelta(minutes=session.duration_minutes) <= now:
            return session
    return None


def session_for_report(*, learner: Learner, now=None) -> PlannedSession | None:
    """Which session a "done"/"skipped" message refers to: the latest started, unreported session
    (today's counts even if it has not formally ended); else the next one today."""
    now = now or timezone.now()
    started = PlannedSession.objects.filter(
        plan__learner=learner, status=SessionStatus.PLANNED,
        planned_start__lte=now + timedelta(hours=12), planned_start__gte=now - timedelta(days=7),
    ).order_by("-planned_start")
    return started.first()


def progress_for(*, learner: Learner) -> dict:
    rows = PlannedSession.objects.filter(plan__learner=learner)
    counts = dict.fromkeys(SessionStatus.values, 0)
    for status in rows.values_list("status", flat=True):
        counts[status] += 1
    done = counts[SessionStatus.COMPLETED]
    reported = done + counts[SessionStatus.SKIPPED] + counts[SessionStatus.MISSED]
    return {"planned": counts[SessionStatus.PLANNED], "completed": done, "skipped": counts[SessionStatus.SKIPPED],
            "missed": counts[SessionStatus.MISSED], "completion_rate": round(done / reported, 2) if reported else None}


# A turn pending longer than this is a crashed request, not a learner still waiting (the model
# timeout is 120 s); it must not hold background work back forever.
TURN_IN_FLIGHT_WINDOW_S = 180


def turns_in_flight() -> bool:
    """True while some learner is waiting for a reply (a learner message still pending). Background
    model calls (memory extraction, summaries) yield to it: see core.llm.priority. One indexed
    query on Message.created_at; asked at most every BLOOM_LLM_YIELD_POLL seconds."""
    since = timezone.now() - timedelta(seconds=TURN_IN_FLIGHT_WINDOW_S)
    return Message.objects.filter(created_at__gte=since, status=MessageStatus.PENDING, role=Role.LEARNER).exists()


# --- plans, sessions, check-ins and turns as API resources (client-scoped like the rest) ----------
def plans_for(*, learner: Learner, week_start=None) -> QuerySet[Plan]:
    # The prefetch sets each session's `plan` (and so its learner) without more queries.
    qs = Plan.objects.filter(learner=learner).select_related("learner").prefetch_related("sessions") \
        .order_by("-week_start")
    return qs.filter(week_start=week_start) if week_start is not None else qs


def sessions_for(*, learner: Learner, week_start=None, status: str | None = None) -> QuerySet[PlannedSession]:
    """A learner's sessions, in start order; `week_start` is the Monday of a week in the learner's
    own time zone (the plan a session belongs to)."""
    qs = PlannedSession.objects.filter(plan__learner=learner).select_related("plan")
    if week_start is not None:
        qs = qs.filter(plan__week_start=week_start)
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("planned_start", "id")


def session_get(*, client: ApiClient | None, public_id: UUID) -> PlannedSession | None:
    """A planned session by its public id, scoped to the client (None: staff)."""
    qs = PlannedSession.objects.select_related("plan__learner")
    if client is not None:
        qs = qs.filter(plan__learner__client=client)
    return qs.filter(public_id=public_id).first()


def checkins_for(*, learner: Learner) -> QuerySet[CheckIn]:
    return CheckIn.objects.filter(learner=learner).order_by("-created_at", "-id")


def turns_for(*, conversation: Conversation) -> QuerySet[Turn]:
    # Both messages are joined: a turn names them by their public ids.
    return (Turn.objects.filter(learner_message__conversation=conversation).select_related("learner_message", "reply")
            .order_by("learner_message_id"))


def chat_link_learner(*, token: str) -> Learner | None:
    """The learner a chat-link token opens, or None when the signature is wrong, the link has
    expired or was revoked (all look alike to the holder: no page)."""
    try:
        payload = signing.loads(token, salt=CHAT_LINK_SALT)
    except signing.BadSignature:
        return None
    now = timezone.now()
    if not isinstance(payload, dict) or int(payload.get("exp", 0)) <= now.timestamp():
        return None
    link = (ChatLink.objects.select_related("learner__profile")
            .filter(pk=payload.get("link"), revoked_at__isnull=True, expires_at__gt=now).first())
    return link.learner if link is not None else None


def sessions_in_view(*, learner: Learner, now=None) -> list[PlannedSession]:
    """The sessions a learner's message may name: from a week ago to two weeks ahead, any status,
    in time order (the reader resolves "my Thursday session" against these)."""
    now = now or timezone.now()
    return list(PlannedSession.objects.filter(plan__learner=learner, planned_start__gte=now - timedelta(days=8),
                                              planned_start__lte=now + timedelta(days=15))
                .select_related("plan__learner").order_by("planned_start")[:40])
