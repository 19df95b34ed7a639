"""Plans and planned sessions: scheduling, moving and taking back sessions, and the weekly and
catch-up options the coach offers (computed in code, never by the model)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from coaching.models import Learner, LearnerProfile, Plan, PlannedSession, SessionStatus
from coaching.services.learners import learner_tz
from coaching.turn.reading.plan_request import PlanRequest
from core.errors import ApplicationError


def week_start_for(learner: Learner, when: datetime) -> date:
    local = when.astimezone(learner_tz(learner)).date()
    return local - timedelta(days=local.weekday())


def _session_start(learner: Learner, start: datetime) -> datetime:
    if timezone.is_naive(start):
        start = start.replace(tzinfo=learner_tz(learner))
    if start < timezone.now() - timedelta(minutes=5):
        raise ApplicationError("cannot schedule a session in the past", field="start")
    return start


_MAX_MINUTES = 600


def _session_minutes(duration_minutes: int) -> int:
    if not 5 <= int(duration_minutes) <= _MAX_MINUTES:
        raise ApplicationError("duration_minutes must be between 5 and 600", field="duration_minutes")
    return int(duration_minutes)


def _claim_time(learner: Learner, start: datetime, minutes: int, *, moving: int | None = None) -> None:
    """A learner studies one session at a time: a session overlapping one already planned or done
    is refused (409). Asked "can we plan my week?" with a plan in place, the coach scheduled the
    same three sessions again, and each counted twice as planned in the adherence export (trial
    of 2026-12-03, evening). The learner's row is locked first, so two requests at once cannot
    both pass; the caller's transaction holds the lock until its session is written."""
    Learner.objects.select_for_update().filter(pk=learner.pk).first()
    end = start + timedelta(minutes=minutes)
    nearby = (PlannedSession.objects.filter(plan__learner=learner, status__in=(SessionStatus.PLANNED,
                                                                                 SessionStatus.COMPLETED),
                                            planned_start__lt=end,
                                            planned_start__gt=start - timedelta(minutes=_MAX_MINUTES))
              .exclude(pk=moving).order_by("planned_start"))
    for other in nearby:
        if other.planned_start + timedelta(minutes=other.duration_minutes) > start:
            raise ApplicationError(
                f"a session is already planned then ({other.planned_start.isoformat()}, {other.duration_minutes} min)",
                code="session_overlap", field="start", status=409)


@transaction.atomic
def session_schedule(*, learner: Learner, start: datetime, duration_minutes: int, topic: str = "") -> PlannedSession:
    minutes = _session_minutes(duration_minutes)
    start = _session_start(learner, start)
    _claim_time(learner, start, minutes)
    plan, _ = Plan.objects.get_or_create(learner=learner, week_start=week_start_for(learner, start))
    return PlannedSession.objects.create(plan=plan, planned_start=start, duration_minutes=minutes,
                                         topic=topic[:200])


@transaction.atomic
def session_unschedule(*, learner: Learner, session_id: int) -> bool:
    """Take back a session the coach scheduled, if nothing was reported on it yet."""
    deleted, _ = PlannedSession.objects.filter(pk=session_id, plan__learner=learner,
                                               status=SessionStatus.PLANNED).delete()
    return bool(deleted)


@transaction.atomic
def session_reschedule(*, session: PlannedSession, start: datetime | None = None,
                       duration_minutes: int | None = None, topic: str | None = None) -> PlannedSession:
    """Move or change a planned session, with the same rules as `session_schedule` (5-600 min,
    not in the past). A session already reported (completed, skipped, missed) is history and is
    not moved. A new start in another week moves the session to that week's plan."""
    session = PlannedSession.objects.select_for_update().select_related("plan__learner").get(pk=session.pk)
    if session.status != SessionStatus.PLANNED:
        raise ApplicationError(f"only planned sessions can be rescheduled (this one is {session.status})",
                               code="not_planned", field="status", status=409)
    learner = session.plan.learner
    fields: list[str] = []
    if duration_minutes is not None:
        session.duration_minutes = _session_minutes(duration_minutes)
        fields.append("duration_minutes")
    if topic is not None:
        session.topic = topic[:200]
        fields.append("topic")
    new_start = _session_start(learner, start) if start is not None else None
    if new_start is not None or duration_minutes is not None:
        _claim_time(learner, new_start or session.planned_start, session.duration_minutes, moving=session.pk)
    if new_start is not None:
        session.planned_start = new_start
        session.plan, _ = Plan.objects.get_or_create(learner=learner, week_start=week_start_for(learner, new_start))
        fields += ["planned_start", "plan"]
    if fields:
        session.save(update_fields=fields)
    return session


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


def plan_options(*, learner: Learner, profile: LearnerProfile, now: datetime | None = None,
                 request: PlanRequest | None = None) -> list[dict]:
    """Two concrete weekly options computed in CODE from the profile (time budget, best time) and
    from what the request to plan said about when (`coaching.turn.reading.plan_request`: days, a time of day or
    an hour, a time that is taken), which wins over the profile. The model never invents slots;
    it only phrases the introduction. Stored on the Turn so that a later "option B"/"yes" is
    resolved by code."""
    tz = learner_tz(learner)
    now = (now or timezone.now()).astimezone(tz)
    request = request or PlanRequest()
    weekly_min = int((profile.weekly_hours or Decimal(2)) * 60)
    hour = _request_hour(request, profile.best_time or "flexible")
    topic = (profile.primary_goal or "study")[:200]
    allowed = request.days if request.days is not None else frozenset(range(7))

    if request.session_minutes:
        # The learner named a sitting's length ("20 minutes a day"): one option, sessions of that
        # length, as many as the week's time fills (at most one a day on the allowed days).
        minutes = request.session_minutes
        starts = _spread_days(now, hour, allowed, max(1, min(7, round(weekly_min / minutes))), 1)
        if starts:
            return [_option("A", starts, minutes, hour, topic)]
    options = []
    for label, count, spacing in (("A", 3, 2), ("B", 2, 3)):
        starts = _spread_days(now, hour, allowed, count, spacing)
        if not starts:
            continue
        # The week's time over the sessions there are room for (fewer allowed days: longer ones).
        minutes = max(15, min(180, (weekly_min // len(starts)) // 5 * 5))
        options.append(_option(label, starts, minutes, hour, topic))
    if len(options) == 2 and options[0]["summary"] == options[1]["summary"]:
        options.pop()  # too few allowed days for the two spacings to differ: one option, not two alike
    return options


def _option(label: str, starts: list[datetime], minutes: int, hour: int, topic: str) -> dict:
    when = ", ".join(s.strftime("%a") for s in starts)
    return {"label": label,
            "summary": f"{len(starts)} session{'s' if len(starts) > 1 else ''} of {minutes} min "
                       f"({when} at {hour:02d}:00)",
            "sessions": [{"start": s.isoformat(), "minutes": minutes, "topic": topic} for s in starts]}


# When a named time of day is taken ("around my night shifts") and it is also the profile's best
# time, the sessions go to the first of these that is free.
_FREE_TIME_ORDER = ("evening", "morning", "afternoon", "midday", "night")


def _request_hour(request: PlanRequest, profile_time: str) -> int:
    if request.hour is not None:
        return request.hour
    time = request.best_time or profile_time
    if request.busy_time and time in (request.busy_time, "flexible"):
        time = next(t for t in _FREE_TIME_ORDER if t != request.busy_time)
    return _SLOT_HOUR.get(time, 18)


def _spread_days(now: datetime, hour: int, allowed: frozenset[int], count: int, spacing: int) -> list[datetime]:
    """`count` start times on allowed weekdays from tomorrow, `spacing` days apart where the
    allowed days within the next week permit it, closer where they do not; at most a week ahead."""
    first = (now + timedelta(days=1)).replace(hour=hour, minute=0, second=0, microsecond=0)
    candidates = [first + timedelta(days=i) for i in range(7) if (first + timedelta(days=i)).weekday() in allowed]
    chosen: list[datetime] = []
    for gap in range(spacing, 0, -1):
        chosen = []
        for day in candidates:
            if not chosen or (day - chosen[-1]).days >= gap:
                chosen.append(day)
            if len(chosen) == count:
                return chosen
    return chosen
