"""Check-ins: the learner's report on a session (done or skipped), and taking one back. The
session's status moves through `session_status_set`, which writes the audit row."""

from __future__ import annotations

from django.db import transaction

from coaching.models import CheckIn, CompletionSource, Learner, Message, PlannedSession, SessionStatus
from coaching.services.session_status import StatusSource, session_status_set
from core.errors import ApplicationError

_STATUS_OF = {"completed": SessionStatus.COMPLETED, "skipped": SessionStatus.SKIPPED}


@transaction.atomic
def checkin_log(*, learner: Learner, outcome: str, session: PlannedSession | None = None,
                message: Message | None = None, source: str = CompletionSource.SELF_REPORT,
                changed_by: str = StatusSource.CHECKIN) -> CheckIn:
    """Record a check-in; with a session, set its status (`source` is the completion source of a
    completed session, `changed_by` the audit row's source)."""
    if outcome not in ("completed", "skipped"):
        raise ApplicationError("outcome must be 'completed' or 'skipped'", field="outcome")
    if session is not None:
        if session.plan.learner_id != learner.id:
            raise ApplicationError("session belongs to another learner", field="session_id", status=404)
        if session.status in (SessionStatus.CANCELLED, SessionStatus.REPLACED):
            raise ApplicationError(f"this session was {session.status}: report the session that took its place, "
                                   "or a check-in without a session", code="session_withdrawn", field="session_id",
                                   status=409)
        # The same report again ("done" twice) is the same check-in, not a second one: a session is
        # reported once; a changed report ("done", then "skipped") is a new check-in that changes it.
        latest = CheckIn.objects.filter(session=session).order_by("-created_at", "-pk").first()
        if latest is not None and latest.outcome == outcome and session.status == _STATUS_OF[outcome]:
            return latest
        session = session_status_set(
            session=session, to_status=SessionStatus.COMPLETED if outcome == "completed" else SessionStatus.SKIPPED,
            source=changed_by, completion_source=source,
        )
    return CheckIn.objects.create(learner=learner, session=session, message=message, outcome=outcome)


@transaction.atomic
def checkin_undo(*, learner: Learner, checkin_id: int) -> CheckIn | None:
    """Take back a check-in the coach logged (the learner said "undo" / "no, I didn't"): the
    check-in row goes and its session is planned again. None when it is already gone."""
    checkin = CheckIn.objects.select_related("session").filter(pk=checkin_id, learner=learner).first()
    if checkin is None:
        return None
    if checkin.session is not None:
        session_status_set(session=checkin.session, to_status=SessionStatus.PLANNED, source=StatusSource.CHECKIN,
                           detail=f"check-in {checkin.pk} taken back")
    checkin.delete()
    return checkin
