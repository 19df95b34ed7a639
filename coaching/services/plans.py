"""Plans and planned sessions: scheduling, moving, cancelling and replacing sessions (a session
is never deleted once planned), and the weekly and catch-up options the coach offers (computed
in code, never by the model)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from coaching.models import Learner, LearnerProfile, Plan, PlannedSession, SessionStatus, SessionStatusChange
from coaching.selectors import SESSION_MAX_MINUTES, session_overlapping
from coaching.services.learners import learner_tz
from coaching.services.session_status import StatusSource, session_status_set
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


_MAX_MINUTES = SESSION_MAX_MINUTES


def _session_minutes(duration_minutes: int) -> int:
    if not 5 <= int(duration_minutes) <= _MAX_MINUTES:
        raise ApplicationError("duration_minutes must be between 5 and 600", field="duration_minutes")
    return int(duration_minutes)


def _claim_time(learner: Learner, start: datetime, minutes: int, *, moving: int | None = None) -> None:
    """A learner studies one session at a time: a session overlapping one already planned or done
    is refused (409): otherwise "can we plan my week?" with a plan in place schedules the same
    sessions again, and each counts twice as planned in the adherence export. The learner's row is
    locked first, so two requests at once cannot both pass; the caller's transaction holds the lock
    until its session is written."""
    Learner.objects.select_for_update().filter(pk=learner.pk).first()
    if other := session_overlapping(learner=learner, start=start, minutes=minutes, moving=moving):
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


def session_due(session: PlannedSession, now: datetime | None = None) -> bool:
    """Its planned start + duration + the missed grace has passed: the session counts in its week
    (the research export's definition of due). From then on it is history: it may be reported
    (done, skipped) but not moved, resized or cancelled, so its week keeps it."""
    grace = timedelta(minutes=settings.BLOOM_MISSED_GRACE_MINUTES + session.duration_minutes)
    return session.planned_start + grace <= (now or timezone.now())


def _locked_open_session(session: PlannedSession) -> PlannedSession:
    """The session's row, locked, if it may still change: planned and not yet due (409 otherwise)."""
    row = PlannedSession.objects.select_for_update().select_related("plan__learner").get(pk=session.pk)
    if row.status != SessionStatus.PLANNED:
        raise ApplicationError(f"only planned sessions can be moved or cancelled (this one is {row.status})",
                               code="not_planned", field="status", status=409)
    if session_due(row):
        raise ApplicationError(
            "this session's time has passed: it stays in its week; report it as done or skipped instead",
            code="session_due", field="session", status=409)
    return row


def _reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ApplicationError("a reason is required", code="reason_required", field="reason")
    return reason[:200]


def _move(row: PlannedSession, *, start: datetime | None, duration_minutes: int | None, reason: str) -> None:
    """Move/resize a locked, open session in place: one UPDATE and one audit row (source move)."""
    learner = row.plan.learner
    old_start = row.planned_start
    minutes = _session_minutes(duration_minutes) if duration_minutes is not None else row.duration_minutes
    new_start = _session_start(learner, start) if start is not None else old_start
    _claim_time(learner, new_start, minutes, moving=row.pk)
    row.planned_start, row.duration_minutes = new_start, minutes
    row.plan, _ = Plan.objects.get_or_create(learner=learner, week_start=week_start_for(learner, new_start))
    row.save(update_fields=["planned_start", "duration_minutes", "plan"])
    SessionStatusChange.objects.create(session=row, from_status=row.status, to_status=row.status,
                                       source=StatusSource.MOVE, detail=reason, from_start=old_start,
                                       to_start=new_start)


@transaction.atomic
def session_move(*, session: PlannedSession, start: datetime, duration_minutes: int | None = None,
                 reason: str) -> PlannedSession:
    """Move one named planned session to `start` (and optionally a new length): the same row, one
    write, one audit row with from_start/to_start. Undo = move it back to the audit row's
    `from_start`. Refused (409) when the session is not planned or already due (its week keeps
    it), and by the scheduling rules (not in the past, 5-600 min, no overlap)."""
    row = _locked_open_session(session)
    _move(row, start=start, duration_minutes=duration_minutes, reason=_reason(reason))
    return row


@transaction.atomic
def session_cancel(*, session: PlannedSession, reason: str) -> PlannedSession:
    """Take a planned session out of the plan with a reason: status `cancelled`, audited, never
    deleted. Only before it is due; a session whose time has passed is reported, not cancelled."""
    reason = _reason(reason)
    row = _locked_open_session(session)
    return session_status_set(session=row, to_status=SessionStatus.CANCELLED, source=StatusSource.CANCEL,
                              detail=reason)


UNDO_REASON = "taken back: undo of the coach's scheduling"


@transaction.atomic
def session_unschedule(*, learner: Learner, session_id: int) -> bool:
    """Take back a session the coach scheduled (the chat's undo), if nothing was reported on it and
    it is not yet due. The session is cancelled (reason UNDO_REASON), not deleted: an export made
    in between may already have listed it as pending, so the row and its audit stay. False when
    there is no such session or it can no longer be taken back."""
    session = PlannedSession.objects.filter(pk=session_id, plan__learner=learner,
                                            status=SessionStatus.PLANNED).first()
    if session is None or session_due(session):
        return False
    session_cancel(session=session, reason=UNDO_REASON)
    return True


@transaction.atomic
def session_reschedule(*, session: PlannedSession, start: datetime | None = None,
                       duration_minutes: int | None = None, topic: str | None = None,
                       reason: str = "rescheduled") -> PlannedSession:
    """Move or change a planned session, with the same rules as `session_schedule` (5-600 min,
    not in the past). A session already reported (completed, skipped, missed) or already due is
    history and is not moved. A new start in another week moves the session to that week's plan;
    a change of time or length is audited like `session_move`."""
    row = _locked_open_session(session)
    if topic is not None:
        row.topic = topic[:200]
        row.save(update_fields=["topic"])
    if start is not None or duration_minutes is not None:
        _move(row, start=start, duration_minutes=duration_minutes, reason=_reason(reason))
    for name in ("planned_start", "duration_minutes", "plan", "topic"):
        setattr(session, name, getattr(row, name))
    return row


def _option_slots(option: dict) -> list[tuple[datetime, int, str]]:
    try:
        return [(datetime.fromisoformat(str(s["start"])), int(s["minutes"]), str(s.get("topic", "")))
                for s in option["sessions"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ApplicationError(f"not a plan option: {exc}", code="invalid_option", field="option") from exc


@transaction.atomic
def session_makeup_apply(*, learner: Learner, option: dict, reason: str) -> list[PlannedSession]:
    """Apply a make-up / reschedule option (`reschedule_options`, or any option with `replaces`,
    a list of session ids): the sessions it names are replaced, never added to. With one slot per
    replaced session, a planned, not-yet-due session is MOVED to its slot (same row, audited like
    `session_move`); a missed or overdue one stays in its week's history with status `replaced`
    (`replaced_by` the new session at its slot), so the make-up takes its place instead of adding
    one. With fewer slots (several sessions fitted into one), every replaced session becomes
    `replaced` by the first new one. A completed or skipped session cannot be replaced (409).
    An option without `replaces` just schedules its slots. Returns the slots' sessions, in order."""
    reason = _reason(reason)
    slots = _option_slots(option)
    ids = [int(i) for i in option.get("replaces") or []]
    rows = {s.pk: s for s in PlannedSession.objects.select_for_update().select_related("plan__learner")
            .filter(pk__in=ids, plan__learner=learner)}
    if len(rows) != len(set(ids)):
        raise ApplicationError("the option names a session this learner does not have", code="not_found",
                               field="replaces", status=404)
    old = [rows[i] for i in ids]
    for row in old:
        if row.status not in (SessionStatus.PLANNED, SessionStatus.MISSED):
            raise ApplicationError(f"a {row.status} session cannot be replaced", code="not_replaceable",
                                   field="replaces", status=409)
    paired = len(slots) == len(old)
    result: list[PlannedSession] = []
    replaced: list[tuple[PlannedSession, PlannedSession]] = []  # (old, the session taking its place)
    for index, (start, minutes, topic) in enumerate(slots):
        row = old[index] if paired else None
        if row is not None and row.status == SessionStatus.PLANNED and not session_due(row):
            _move(row, start=start, duration_minutes=minutes, reason=reason)
            result.append(row)
            continue
        new = session_schedule(learner=learner, start=start, duration_minutes=minutes,
                               topic=topic or (row.topic if row else ""))
        result.append(new)
        if row is not None:
            replaced.append((row, new))
    if not paired and result:
        replaced = [(row, result[0]) for row in old]
    for row, new in replaced:
        row.replaced_by = new
        row.save(update_fields=["replaced_by"])
        session_status_set(session=row, to_status=SessionStatus.REPLACED, source=StatusSource.MAKEUP,
                           detail=f"{reason} (by session {new.public_id})")
    return result


@transaction.atomic
def session_makeup_undo(*, learner: Learner, session_ids: list[int], reason: str) -> int:
    """Take back `session_makeup_apply` (the chat's undo of the turn that applied it), given the ids
    of the sessions it returned: a session it moved goes back to where its last move took it from;
    a session it created is cancelled, and the sessions it replaced get back the status they had
    (audited each). Only while the sessions are still planned and not due; returns how many of
    `session_ids` were taken back."""
    reason = _reason(reason)
    undone = 0
    for session in PlannedSession.objects.filter(pk__in=session_ids, plan__learner=learner,
                                                 status=SessionStatus.PLANNED):
        if session_due(session):
            continue
        replaced = list(PlannedSession.objects.select_for_update().filter(replaced_by=session,
                                                                          status=SessionStatus.REPLACED))
        if replaced:
            for row in replaced:
                before = (row.status_changes.filter(to_status=SessionStatus.REPLACED).order_by("-changed_at", "-pk")
                          .values_list("from_status", flat=True).first()) or SessionStatus.MISSED
                row.replaced_by = None
                row.save(update_fields=["replaced_by"])
                session_status_set(session=row, to_status=before, source=StatusSource.MAKEUP, detail=reason)
            session_cancel(session=session, reason=reason)
            undone += 1
            continue
        move = session.status_changes.filter(source=StatusSource.MOVE).order_by("-changed_at", "-pk").first()
        if move is not None and move.to_start == session.planned_start and move.from_start > timezone.now():
            _move(_locked_open_session(session), start=move.from_start, duration_minutes=None, reason=reason)
            undone += 1
        elif move is None:
            session_cancel(session=session, reason=reason)  # created by the option, replacing nothing
            undone += 1
    return undone


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
    hour, minute = _request_time(request, profile.best_time or "flexible")
    topic = (profile.primary_goal or "study")[:200]
    allowed = request.days if request.days is not None else frozenset(range(7))

    if request.session_minutes:
        # The learner named a sitting's length ("20 minutes a day"): one option, sessions of that
        # length, as many as the week's time fills (at most one a day on the allowed days).
        minutes = request.session_minutes
        starts = _spread_days(now, (hour, minute), allowed, max(1, min(7, round(weekly_min / minutes))), 1)
        if starts:
            return [_option("A", starts, minutes, topic)]
    options = []
    for label, count, spacing in (("A", 3, 2), ("B", 2, 3)):
        starts = _spread_days(now, (hour, minute), allowed, count, spacing)
        if not starts:
            continue
        # The week's time over the sessions there are room for (fewer allowed days: longer ones).
        minutes = max(15, min(180, (weekly_min // len(starts)) // 5 * 5))
        options.append(_option(label, starts, minutes, topic))
    if len(options) == 2 and options[0]["summary"] == options[1]["summary"]:
        options.pop()  # too few allowed days for the two spacings to differ: one option, not two alike
    return options


def _option(label: str, starts: list[datetime], minutes: int, topic: str) -> dict:
    when = ", ".join(s.strftime("%a") for s in starts)
    return {"label": label,
            "summary": f"{len(starts)} session{'s' if len(starts) > 1 else ''} of {minutes} min "
                       f"({when} at {starts[0]:%H:%M})",
            "sessions": [{"start": s.isoformat(), "minutes": minutes, "topic": topic} for s in starts]}


# When a named time of day is taken ("around my night shifts") and it is also the profile's best
# time, the sessions go to the first of these that is free.
_FREE_TIME_ORDER = ("evening", "morning", "afternoon", "midday", "night")


def _request_time(request: PlanRequest, profile_time: str) -> tuple[int, int]:
    """(hour, minute) the sessions start at: the clock time the learner named, else their time of day's hour."""
    if request.hour is not None:
        return request.hour, request.minute
    time = request.best_time or profile_time
    if request.busy_time and time in (request.busy_time, "flexible"):
        time = next(t for t in _FREE_TIME_ORDER if t != request.busy_time)
    return _SLOT_HOUR.get(time, 18), 0


def _spread_days(now: datetime, at: tuple[int, int], allowed: frozenset[int], count: int,
                 spacing: int) -> list[datetime]:
    """`count` start times on allowed weekdays from tomorrow, `spacing` days apart where the
    allowed days within the next week permit it, closer where they do not; at most a week ahead."""
    first = (now + timedelta(days=1)).replace(hour=at[0], minute=at[1], second=0, microsecond=0)
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
