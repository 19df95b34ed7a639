"""Calendar feeds (create or rotate, confirm the subscription, record a fetch) and the import of
a learner's exported calendar, which marks sessions completed through the audited status writer."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import uuid
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone
from icalendar import Calendar

from coaching.models import CompletionSource, Learner, PlannedSession, SessionStatus
from coaching.research import conf
from coaching.research.models import CalendarFeed
from coaching.services import StatusSource, session_status_set
from core.errors import ApplicationError


def hash_feed_token(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


@transaction.atomic
def calendar_feed_create(*, learner: Learner) -> tuple[CalendarFeed, str]:
    """Create (or rotate) the learner's feed; returns the feed and the raw token, shown once.
    Rotation revokes the old URL, so the subscription has to be confirmed again."""
    CalendarFeed.objects.filter(learner=learner, revoked_at__isnull=True).update(revoked_at=timezone.now())
    raw = secrets.token_urlsafe(32)
    feed = CalendarFeed.objects.create(learner=learner, token_hash=hash_feed_token(raw))
    return feed, raw


@transaction.atomic
def calendar_subscription_confirm(*, learner: Learner) -> CalendarFeed:
    feed = CalendarFeed.objects.select_for_update().filter(learner=learner, revoked_at__isnull=True).first()
    if feed is None:
        raise ApplicationError("create a calendar feed before confirming the subscription", code="no_calendar_feed")
    if feed.subscription_confirmed_at is None:
        feed.subscription_confirmed_at = timezone.now()
        feed.save(update_fields=["subscription_confirmed_at"])
    return feed


def calendar_feed_touch(*, feed: CalendarFeed) -> None:
    CalendarFeed.objects.filter(pk=feed.pk).update(last_fetched_at=timezone.now())


def session_uid(session: PlannedSession) -> str:
    """The ICS UID of a planned session: its public id (a client sees no database key)."""
    return f"session-{session.public_id}@bloom"


def _session_lookup_from_uid(uid: str) -> dict | None:
    """The look-up for one of our UIDs: the public id, or the database key of a feed exported
    before sessions had public ids (still on learners' calendars). Always scoped to the learner."""
    if not (uid.startswith("session-") and uid.endswith("@bloom")):
        return None
    middle = uid[len("session-"):-len("@bloom")]
    if middle.isdigit():
        return {"pk": int(middle)}
    try:
        return {"public_id": uuid.UUID(middle)}
    except ValueError:
        return None


def _as_aware(value: dt.date | dt.datetime, tz: ZoneInfo) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=tz)
    return dt.datetime.combine(value, dt.time(0, 0), tzinfo=tz)  # all-day event: local midnight


@dataclass
class ImportResult:
    matched_uid: int = 0
    matched_time: int = 0
    already_done: int = 0
    unmatched: int = 0
    not_ended: int = 0
    session_ids: list[uuid.UUID] = field(default_factory=list)  # public ids


@transaction.atomic
def calendar_import(*, learner: Learner, ics: bytes | str, now: dt.datetime | None = None) -> ImportResult:
    """Mark sessions completed (source=calendar) from a learner's exported calendar. An event
    counts as done once it has ended and is not cancelled. Match by our UID first, else by a
    start within ± the match window of a not-yet-completed session. Never overrides a session the
    learner already reported (their word wins)."""
    now = now or timezone.now()
    tz = ZoneInfo(learner.timezone or "UTC")
    try:
        calendar = Calendar.from_ical(ics)
    except ValueError as exc:
        raise ApplicationError(f"not a valid iCalendar file: {exc}", code="invalid_ics", field="ics")
    window = dt.timedelta(minutes=conf.calendar_match_window_minutes())
    result = ImportResult()
    sessions = PlannedSession.objects.select_for_update().filter(plan__learner=learner)
    for event in calendar.walk("VEVENT"):
        if str(event.get("STATUS", "")).upper() == "CANCELLED" or event.get("DTSTART") is None:
            continue
        start = _as_aware(event.decoded("DTSTART"), tz)
        if event.get("DTEND") is not None:
            end = _as_aware(event.decoded("DTEND"), tz)
        elif event.get("DURATION") is not None:
            end = start + event.decoded("DURATION")
        else:
            end = start
        if end > now:
            result.not_ended += 1
            continue
        session = None
        by_uid = _session_lookup_from_uid(str(event.get("UID", "")))
        if by_uid is not None:
            session = sessions.filter(**by_uid).first()
            if session is not None:
                result.matched_uid += 1
        if session is None:
            candidates = sessions.filter(
                planned_start__gte=start - window, planned_start__lte=start + window,
                status__in=[SessionStatus.PLANNED, SessionStatus.MISSED],
            )
            session = min(candidates, key=lambda s: abs(s.planned_start - start), default=None)
            if session is not None:
                result.matched_time += 1
        if session is None:
            result.unmatched += 1
            continue
        if session.status in (SessionStatus.COMPLETED, SessionStatus.SKIPPED):
            result.already_done += 1
            continue
        session_status_set(
            session=session, to_status=SessionStatus.COMPLETED, source=StatusSource.CALENDAR,
            completed_at=end, completion_source=CompletionSource.CALENDAR,
            detail=f"ics uid={str(event.get('UID', ''))[:120]}",
        )
        result.session_ids.append(session.public_id)
    return result
