"""ICS rendering of a learner's planned sessions (the subscribed feed)."""

from __future__ import annotations

import datetime as dt

from icalendar import Calendar, Event

from coaching.models import PlannedSession
from coaching.research.services import session_uid

# Keep a feed bounded: calendar clients poll it, so old history is left out.
FEED_HISTORY_DAYS = 28


def render_feed(sessions: list[PlannedSession], *, now: dt.datetime) -> bytes:
    cal = Calendar()
    cal.add("prodid", "-//Bloom//learning sessions//EN")
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
        event.add("status", "CANCELLED" if s.status == "skipped" else "CONFIRMED")
        cal.add_component(event)
    return cal.to_ical()
