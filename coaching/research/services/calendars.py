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


# Bloom's own feed says so (coaching.research.calendar.render_feed): the calendar's PRODID, and a
# property on each event that calendar clients copy along when they merge a subscribed feed.
BLOOM_FEED_PRODID = "-//Bloom//learning sessions//EN"
BLOOM_FEED_MARKER = "X-BLOOM-FEED"


@dataclass
class ImportResult:
    matched_uid: int = 0
    already_done: int = 0
    unmatched: int = 0  # events carrying none of this learner's session UIDs (a time match is not evidence)
    not_ended: int = 0
    bloom_feed: int = 0  # events of Bloom's own feed merged into the file: never evidence
    session_ids: list[uuid.UUID] = field(default_factory=list)  # public ids


@transaction.atomic
def calendar_import(*, learner: Learner, ics: bytes | str, now: dt.datetime | None = None) -> ImportResult:
    """Mark sessions completed (source=calendar) from the learner's OWN exported calendar: an event
    is evidence of a session only when it carries that session's UID (the learner's calendar kept
    Bloom's event as theirs), has ended and is not cancelled. Never a time match alone (an
    unrelated appointment near a session is not practice), and never Bloom's own feed read back
    (it lists every session whether practised or not): a file that is Bloom's feed is refused
    (`bloom_feed`), and feed events merged into a learner's file are skipped. Never overrides a
    session the learner already reported (their word wins)."""
    now = now or timezone.now()
    tz = ZoneInfo(learner.timezone or "UTC")
    try:
        calendar = Calendar.from_ical(ics)
    except ValueError as exc:
        raise ApplicationError(f"not a valid iCalendar file: {exc}", code="invalid_ics", field="ics")
    if str(calendar.get("PRODID", "")).strip() == BLOOM_FEED_PRODID:
        raise ApplicationError(
            "this is Bloom's own calendar feed, which lists every planned session whether it happened or not; "
            "import the learner's own calendar export instead", code="bloom_feed", field="ics")
    result = ImportResult()
    sessions = PlannedSession.objects.select_for_update().filter(plan__learner=learner)
    for event in calendar.walk("VEVENT"):
        if str(event.get("STATUS", "")).upper() == "CANCELLED" or event.get("DTSTART") is None:
            continue
        if event.get(BLOOM_FEED_MARKER) is not None:
            result.bloom_feed += 1
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
        by_uid = _session_lookup_from_uid(str(event.get("UID", "")))
        session = sessions.filter(**by_uid).first() if by_uid is not None else None
        if session is None:
            result.unmatched += 1
            continue
        result.matched_uid += 1
        if session.status not in (SessionStatus.PLANNED, SessionStatus.MISSED):
            result.already_done += 1
            continue
        session_status_set(
            session=session, to_status=SessionStatus.COMPLETED, source=StatusSource.CALENDAR,
            completed_at=end, completion_source=CompletionSource.CALENDAR,
            detail=f"ics uid={str(event.get('UID', ''))[:120]}",
        )
        result.session_ids.append(session.public_id)
    return result
