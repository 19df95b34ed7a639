"""The one writer of a planned session's status. Every change leaves exactly one
`SessionStatusChange` row (from, to, who changed it) in the same transaction as the change; a
call that changes nothing leaves none. Check-ins, the missed-session sweep and the calendar
import all go through here, so the audit trail is complete whoever moved the session."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from coaching.models import PlannedSession, SessionStatus, SessionStatusChange


class StatusSource:
    """Who changed the status (`SessionStatusChange.source`)."""

    CHECKIN = "checkin"  # a check-in from the chat or the coach's tool, or taking one back
    API = "api"  # a check-in posted by an API client
    CALENDAR = "calendar"  # the learner's calendar export, imported
    MISSED_TASK = "missed_task"  # the periodic sweep that marks unreported sessions missed
    STAFF = "staff"
    MOVE = "move"  # a planned session moved to another time (from_start → to_start; status unchanged)
    CANCEL = "cancel"  # taken out of the plan with a reason, or taken back by the chat's undo
    MAKEUP = "makeup"  # a missed or overdue session replaced by a make-up session


@transaction.atomic
def session_status_set(*, session: PlannedSession, to_status: str, source: str,
                       completed_at: dt.datetime | None = None, completion_source: str = "",
                       detail: str = "") -> PlannedSession:
    """Set one session's status. The row is locked here, so the audit row's `from_status` is what
    the database held. A completed session gets `completed_at` (default now) and
    `completion_source`; any other status clears both. Returns the locked row, and `session`
    itself carries the new values too."""
    if to_status not in SessionStatus.values:
        raise ValueError(f"unknown session status {to_status!r}")
    row = PlannedSession.objects.select_for_update().get(pk=session.pk)
    done = to_status == SessionStatus.COMPLETED
    new = {"status": to_status, "completed_at": (completed_at or timezone.now()) if done else None,
           "completion_source": completion_source if done else ""}
    from_status = row.status
    changed = [name for name, value in new.items() if getattr(row, name) != value]
    for name in changed:
        setattr(row, name, new[name])
    if changed:
        row.save(update_fields=changed)
    if from_status != to_status:
        SessionStatusChange.objects.create(session=row, from_status=from_status, to_status=to_status,
                                           source=source, detail=detail[:200],
                                           completion_source=new["completion_source"])
    if session is not row:
        for name in new:
            setattr(session, name, getattr(row, name))
    return row


@transaction.atomic
def sessions_status_set_bulk(*, session_ids: Iterable[int], from_status: str, to_status: str, source: str,
                             detail: str = "") -> int:
    """Move many sessions from one status to another in one UPDATE and one audit INSERT (the
    missed-session sweep). Only the rows still in `from_status` move, each with its audit row;
    returns how many moved. Completion fields are left alone, so moving to `completed` is for
    `session_status_set`."""
    if to_status == SessionStatus.COMPLETED or to_status not in SessionStatus.values:
        raise ValueError(f"bulk status change to {to_status!r} is not supported")
    if from_status == to_status:
        return 0
    ids = list(PlannedSession.objects.select_for_update()
               .filter(pk__in=list(session_ids), status=from_status).values_list("pk", flat=True))
    if not ids:
        return 0
    PlannedSession.objects.filter(pk__in=ids).update(status=to_status)
    SessionStatusChange.objects.bulk_create(
        [SessionStatusChange(session_id=pk, from_status=from_status, to_status=to_status, source=source,
                             detail=detail[:200]) for pk in ids]
    )
    return len(ids)
