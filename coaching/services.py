"""Writes (`<noun>_<verb>`, keyword-only, atomic) and the memory read path `context_for`."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib.auth import get_user_model
from django.core import signing
from django.db import IntegrityError, transaction
from django.utils import timezone

from coaching.models import (
    CHAT_LINK_SALT,
    ApiClient,
    ChatLink,
    CheckIn,
    CompletionSource,
    Conversation,
    GoalCategory,
    Learner,
    LearnerProfile,
    Message,
    MessageStatus,
    OnboardingStep,
    Plan,
    PlannedSession,
    Role,
    SessionStatus,
    StudyArm,
)
from coaching.onboarding import QUESTIONS
from coaching.selectors import profile_get

logger = logging.getLogger(__name__)


class ServiceError(Exception):
    """A request that cannot be carried out; `code` and `field` feed the API error shape."""

    status = 400

    def __init__(self, message: str, *, code: str = "invalid", field: str | None = None, status: int | None = None):
        super().__init__(message)
        self.code, self.field = code, field
        if status is not None:
            self.status = status


# --- learners and profiles ------------------------------------------------------------------------
def _check_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ServiceError(f"unknown time zone {name!r} (use an IANA name such as 'Europe/Paris')",
                           field="timezone") from None
    return name


@transaction.atomic
def learner_create(*, client: ApiClient, display_name: str = "", study_arm: str = StudyArm.COACH,
                   timezone_name: str = "UTC") -> Learner:
    if study_arm not in StudyArm.values:
        raise ServiceError(f"study_arm must be one of {', '.join(StudyArm.values)}", field="study_arm")
    learner = Learner.objects.create(client=client, display_name=display_name, study_arm=study_arm,
                                     timezone=_check_timezone(timezone_name))
    LearnerProfile.objects.create(learner=learner)
    return learner


PROFILE_FIELDS = ("primary_goal", "goal_category", "weekly_hours", "best_time", "confidence")


@transaction.atomic
def profile_update(*, learner: Learner, **fields: Any) -> LearnerProfile:
    """Staff/API edits of validated fields (serializers validate ranges). When every field is set,
    the gate is complete; otherwise the onboarding step moves to the first missing field."""
    profile = LearnerProfile.objects.select_for_update().get(learner=learner)
    for name, value in fields.items():
        if name not in PROFILE_FIELDS:
            raise ServiceError(f"unknown profile field {name!r}", field=name)
        setattr(profile, name, value)
    profile.onboarding_step = _first_missing_step(profile)
    if profile.onboarding_step == OnboardingStep.DONE and profile.onboarding_completed_at is None:
        profile.onboarding_completed_at = timezone.now()
    profile.full_clean()
    profile.save()
    return profile


def _first_missing_step(profile: LearnerProfile) -> str:
    if not profile.primary_goal:
        return OnboardingStep.GOAL
    if not profile.goal_category:
        return OnboardingStep.CATEGORY
    if profile.weekly_hours is None:
        return OnboardingStep.WEEKLY_HOURS
    if not profile.best_time:
        return OnboardingStep.BEST_TIME
    if profile.confidence is None:
        return OnboardingStep.CONFIDENCE
    return OnboardingStep.DONE


@transaction.atomic
def profile_apply_onboarding(*, learner: Learner, updates: dict) -> LearnerProfile:
    """Save what the onboarding gate (coaching.onboarding.advance) validated."""
    profile = LearnerProfile.objects.select_for_update().get(learner=learner)
    for name, value in updates.items():
        setattr(profile, name, value)
    if profile.onboarding_step == OnboardingStep.DONE and profile.onboarding_completed_at is None:
        profile.onboarding_completed_at = timezone.now()
    profile.full_clean()
    profile.save()
    return profile


# --- conversations and messages -------------------------------------------------------------------
@transaction.atomic
def conversation_start(*, learner: Learner) -> Conversation:
    """A new conversation. A learner still in onboarding gets the gate's current question as the
    opening coach message (templated: the gate never waits on the model)."""
    conversation = Conversation.objects.create(learner=learner)
    profile = profile_get(learner=learner)
    if not profile.onboarded:
        opening = "Hi, I'm Bloom, your learning coach. " + QUESTIONS[profile.onboarding_step]
        Message.objects.create(conversation=conversation, role=Role.COACH, content=opening, specialist="onboarding")
    return conversation


def message_receive(*, conversation: Conversation, content: str, idempotency_key: str | None = None,
                    ) -> tuple[Message, bool]:
    """Persist the learner message first (own transaction), so nothing the learner wrote is lost
    whatever happens to the model afterwards. Returns (message, created). A repeated idempotency
    key returns the existing message with created=False."""
    if idempotency_key:
        existing = conversation.messages.filter(idempotency_key=idempotency_key).first()
        if existing is not None:
            return existing, False
    try:
        with transaction.atomic():
            message = Message.objects.create(conversation=conversation, role=Role.LEARNER, content=content,
                                             idempotency_key=idempotency_key or None, status=MessageStatus.PENDING)
    except IntegrityError:
        # A concurrent request with the same key won the race.
        return conversation.messages.get(idempotency_key=idempotency_key), False
    return message, True


def message_mark_unanswered(*, message: Message) -> None:
    Message.objects.filter(pk=message.pk, status=MessageStatus.PENDING).update(status=MessageStatus.UNANSWERED)
    message.status = MessageStatus.UNANSWERED


# --- plans, sessions, check-ins -------------------------------------------------------------------
def learner_tz(learner: Learner) -> ZoneInfo:
    try:
        return ZoneInfo(learner.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def week_start_for(learner: Learner, when: datetime) -> datetime.date:
    local = when.astimezone(learner_tz(learner)).date()
    return local - timedelta(days=local.weekday())


def _session_start(learner: Learner, start: datetime) -> datetime:
    if timezone.is_naive(start):
        start = start.replace(tzinfo=learner_tz(learner))
    if start < timezone.now() - timedelta(minutes=5):
        raise ServiceError("cannot schedule a session in the past", field="start")
    return start


def _session_minutes(duration_minutes: int) -> int:
    if not 5 <= int(duration_minutes) <= 600:
        raise ServiceError("duration_minutes must be between 5 and 600", field="duration_minutes")
    return int(duration_minutes)


@transaction.atomic
def session_schedule(*, learner: Learner, start: datetime, duration_minutes: int, topic: str = "") -> PlannedSession:
    minutes = _session_minutes(duration_minutes)
    start = _session_start(learner, start)
    plan, _ = Plan.objects.get_or_create(learner=learner, week_start=week_start_for(learner, start))
    return PlannedSession.objects.create(plan=plan, planned_start=start, duration_minutes=minutes,
                                         topic=topic[:200])


@transaction.atomic
def checkin_log(*, learner: Learner, outcome: str, session: PlannedSession | None = None,
                message: Message | None = None, source: str = CompletionSource.SELF_REPORT) -> CheckIn:
    if outcome not in ("completed", "skipped"):
        raise ServiceError("outcome must be 'completed' or 'skipped'", field="outcome")
    if session is not None:
        if session.plan.learner_id != learner.id:
            raise ServiceError("session belongs to another learner", field="session_id", status=404)
        session = PlannedSession.objects.select_for_update().get(pk=session.pk)
        session.status = SessionStatus.COMPLETED if outcome == "completed" else SessionStatus.SKIPPED
        session.completed_at = timezone.now() if outcome == "completed" else None
        session.completion_source = source if outcome == "completed" else ""
        session.save(update_fields=["status", "completed_at", "completion_source"])
    return CheckIn.objects.create(learner=learner, session=session, message=message, outcome=outcome)


@transaction.atomic
def checkin_undo(*, learner: Learner, checkin_id: int) -> CheckIn | None:
    """Take back a check-in the coach logged (the learner said "undo" / "no, I didn't"): the
    check-in row goes and its session is planned again. None when it is already gone."""
    checkin = CheckIn.objects.select_related("session").filter(pk=checkin_id, learner=learner).first()
    if checkin is None:
        return None
    if checkin.session is not None:
        PlannedSession.objects.filter(pk=checkin.session_id).update(
            status=SessionStatus.PLANNED, completed_at=None, completion_source="")
    checkin.delete()
    return checkin


@transaction.atomic
def session_unschedule(*, learner: Learner, session_id: int) -> bool:
    """Take back a session the coach scheduled, if nothing was reported on it yet."""
    deleted, _ = PlannedSession.objects.filter(pk=session_id, plan__learner=learner,
                                               status=SessionStatus.PLANNED).delete()
    return bool(deleted)


@transaction.atomic
def profile_restore(*, learner: Learner, values: dict) -> LearnerProfile:
    """Put profile fields back to what they were before the gate's last write (undo)."""
    profile = LearnerProfile.objects.select_for_update().get(learner=learner)
    for name, value in values.items():
        if name not in (*PROFILE_FIELDS, "onboarding_step"):
            raise ServiceError(f"unknown profile field {name!r}", field=name)
        if name in ("weekly_hours", "confidence"):
            value = None if value in (None, "") else (Decimal(str(value)) if name == "weekly_hours" else int(value))
        else:
            value = value or ""
        setattr(profile, name, value)
    if profile.onboarding_step != OnboardingStep.DONE:
        profile.onboarding_completed_at = None
    profile.full_clean()
    profile.save()
    return profile


def reschedule_options(*, learner: Learner, profile: LearnerProfile, missed: list[PlannedSession],
                       now: datetime | None = None) -> list[dict]:
    """Options for sessions the learner missed, computed in code like `plan_options`: A moves each
    one to the next free days at the learner's best time, B fits them into one longer session.
    Marked kind="reschedule" so a later "yes"/"the second one" is resolved against them."""
    tz = learner_tz(learner)
    now = (now or timezone.now()).astimezone(tz)
    hour = _SLOT_HOUR.get(profile.best_time or "flexible", 18)
    topic = (profile.primary_goal or "study")[:200]
    first = (now + timedelta(days=1)).replace(hour=hour, minute=0, second=0, microsecond=0)
    minutes = [s.duration_minutes for s in missed]
    spread = [first + timedelta(days=i) for i in range(len(missed))]
    combined = min(180, sum(minutes))
    missed_ids = [s.id for s in missed]
    slots = list(zip(spread, minutes, strict=True))
    return [
        {"label": "A", "kind": "reschedule", "replaces": missed_ids,
         "summary": f"move {'it' if len(missed) == 1 else 'them'} to "
                    + ", ".join(f"{d.strftime('%a')} {hour:02d}:00 ({m} min)" for d, m in slots),
         "sessions": [{"start": d.isoformat(), "minutes": m, "topic": topic} for d, m in slots]},
        {"label": "B", "kind": "reschedule", "replaces": missed_ids,
         "summary": f"one catch-up session of {combined} min on {first.strftime('%a')} at {hour:02d}:00",
         "sessions": [{"start": first.isoformat(), "minutes": combined, "topic": topic}]},
    ]


_SLOT_HOUR = {"morning": 8, "midday": 12, "afternoon": 15, "evening": 19, "night": 21, "flexible": 18}


def plan_options(*, learner: Learner, profile: LearnerProfile, now: datetime | None = None) -> list[dict]:
    """Two concrete weekly options computed in CODE from the profile (time budget, best time). The
    model never invents slots; it only phrases the introduction. Stored on the Turn so that a
    later "option B"/"yes" is resolved by code."""
    tz = learner_tz(learner)
    now = (now or timezone.now()).astimezone(tz)
    weekly_min = int((profile.weekly_hours or Decimal(2)) * 60)
    hour = _SLOT_HOUR.get(profile.best_time or "flexible", 18)
    topic = (profile.primary_goal or "study")[:200]

    def days(count: int, spacing: int) -> list[datetime]:
        first = (now + timedelta(days=1)).replace(hour=hour, minute=0, second=0, microsecond=0)
        return [first + timedelta(days=i * spacing) for i in range(count)]

    options = []
    for label, count, spacing in (("A", 3, 2), ("B", 2, 3)):
        minutes = max(15, min(180, (weekly_min // count) // 5 * 5))
        starts = days(count, spacing)
        when = ", ".join(s.strftime("%a") for s in starts)
        options.append({
            "label": label,
            "summary": f"{count} sessions of {minutes} min ({when} at {hour:02d}:00)",
            "sessions": [{"start": s.isoformat(), "minutes": minutes, "topic": topic} for s in starts],
        })
    return options


# --- the memory read path -------------------------------------------------------------------------
def profile_line(profile: LearnerProfile) -> str:
    parts = []
    if profile.primary_goal:
        category = dict(GoalCategory.choices).get(profile.goal_category, "")
        parts.append(f"goal: {profile.primary_goal}" + (f" ({category.lower()})" if category else ""))
    if profile.weekly_hours is not None:
        parts.append(f"{profile.weekly_hours.normalize():f} h/week")
    if profile.best_time:
        parts.append(f"best time: {profile.best_time}")
    if profile.confidence is not None:
        parts.append(f"confidence {profile.confidence}/10")
    return "About the learner: " + ("; ".join(parts) if parts else "nothing known yet") + "."


def context_for(learner: Learner) -> str:
    """THE read path for every specialist: the profile line (coaching owns it) + the memory block
    (recent facts + latest summary) from `memory.selectors.build_context`. Imported lazily: memory
    is written in parallel, and a missing or failing memory layer must degrade to an empty block,
    never break a turn."""
    lines = [profile_line(profile_get(learner=learner))]
    try:
        from memory.selectors import build_context
    except ImportError:
        build_context = None
    if build_context is not None:
        try:
            block = build_context(learner.id)
        except Exception:  # memory must never take the coach down
            logger.exception("memory.build_context failed for learner %s", learner.id)
            block = ""
        if block:
            lines.append(str(block).strip())
    return "\n".join(lines)


def staff_demo_user_ensure(*, username: str, password: str):
    User = get_user_model()
    user, _ = User.objects.get_or_create(username=username, defaults={"is_staff": True, "is_superuser": True})
    user.is_staff = user.is_superuser = True
    user.set_password(password)
    user.save()
    return user


@transaction.atomic
def session_reschedule(*, session: PlannedSession, start: datetime | None = None,
                       duration_minutes: int | None = None, topic: str | None = None) -> PlannedSession:
    """Move or change a planned session, with the same rules as `session_schedule` (5-600 min,
    not in the past). A session already reported (completed, skipped, missed) is history and is
    not moved. A new start in another week moves the session to that week's plan."""
    session = PlannedSession.objects.select_for_update().select_related("plan__learner").get(pk=session.pk)
    if session.status != SessionStatus.PLANNED:
        raise ServiceError(f"only planned sessions can be rescheduled (this one is {session.status})",
                           code="not_planned", field="status", status=409)
    learner = session.plan.learner
    fields: list[str] = []
    if duration_minutes is not None:
        session.duration_minutes = _session_minutes(duration_minutes)
        fields.append("duration_minutes")
    if topic is not None:
        session.topic = topic[:200]
        fields.append("topic")
    if start is not None:
        start = session.planned_start = _session_start(learner, start)
        session.plan, _ = Plan.objects.get_or_create(learner=learner, week_start=week_start_for(learner, start))
        fields += ["planned_start", "plan"]
    if fields:
        session.save(update_fields=fields)
    return session


# --- learner chat links ---------------------------------------------------------------------------

@transaction.atomic
def chat_link_create(*, learner: Learner, expires_in: timedelta) -> tuple[ChatLink, str]:
    """A signed link token for one learner's chat page, valid for `expires_in`. Returns (row,
    token); the token is not stored (the signature is checked against SECRET_KEY)."""
    link = ChatLink.objects.create(learner=learner, expires_at=timezone.now() + expires_in)
    token = signing.dumps({"link": link.pk, "exp": int(link.expires_at.timestamp())}, salt=CHAT_LINK_SALT,
                          compress=True)
    return link, token


@transaction.atomic
def chat_links_revoke(*, learner: Learner) -> int:
    """Every live link of the learner stops working now."""
    return ChatLink.objects.filter(learner=learner, revoked_at__isnull=True).update(revoked_at=timezone.now())
