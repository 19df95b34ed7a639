"""ICS rendering of a learner's planned sessions (the subscribed feed)."""

from __future__ import annotations

import datetime as dt

from icalendar import Calendar, Event

from coaching.models import PlannedSession
from coaching.research.services import session_uid
from coaching.research.services.calendars import BLOOM_FEED_MARKER, BLOOM_FEED_PRODID

# Keep a feed bounded: calendar clients poll it, so old history is left out.
FEED_HISTORY_DAYS = 28


def render_feed(sessions: list[PlannedSession], *, now: dt.datetime) -> bytes:
    cal = Calendar()
    cal.add("prodid", BLOOM_FEED_PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("x-wr-calname", "Bloom study sessions")
    for s in sessions:
        event = Event()
        event.add("uid", session_uid(s))
        event.add("dtstamp", now)
        event.add("dtstart", s.planned_start.astimezone(dt.UTC))
        event.add("dtend", s.planned_start.astimezone(dt.UTC) + dt.timedelta(minutes=s.duration_minutes))
        # The topic is the learner's own plan text, shown only in their own calendar.
        event.add("summary", f"Study: {s.topic}" if s.topic else "Study session")
        event.add("status", "CANCELLED" if s.status in ("skipped", "cancelled", "replaced") else "CONFIRMED")
        # Marks the event as the feed's, so an import of a calendar that merged it never takes it
        # as the learner's evidence (services.calendars.calendar_import).
        event.add(BLOOM_FEED_MARKER, "1")
        cal.add_component(event)
    return cal.to_ical()
