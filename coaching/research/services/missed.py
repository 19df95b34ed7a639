"""The periodic sweep that marks unreported sessions missed."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from coaching.models import CheckIn, PlannedSession, SessionStatus
from coaching.research import conf
from coaching.services import StatusSource, sessions_status_set_bulk


@transaction.atomic
def sessions_mark_missed(*, now: dt.datetime | None = None) -> int:
    """Sessions still `planned` whose start + duration + grace has passed, and that have no
    check-in, become `missed` (one audit row each). Idempotent: only `planned` rows move."""
    now = now or timezone.now()
    grace = dt.timedelta(minutes=conf.missed_grace_minutes())
    # Cheap bound in SQL (a session ends at most 600 minutes after it starts), exact test below.
    candidates = (
        PlannedSession.objects.select_for_update(skip_locked=True)
        .filter(status=SessionStatus.PLANNED, planned_start__lt=now - grace)
        .exclude(Exists(CheckIn.objects.filter(session=OuterRef("pk"))))
        .only("id", "planned_start", "duration_minutes", "status")
    )
    due = [s for s in candidates if s.planned_start + dt.timedelta(minutes=s.duration_minutes) + grace <= now]
    if not due:
        return 0
    return sessions_status_set_bulk(session_ids=[s.pk for s in due], from_status=SessionStatus.PLANNED,
                                    to_status=SessionStatus.MISSED, source=StatusSource.MISSED_TASK)
