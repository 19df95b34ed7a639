"""The one audited writer of a session's status: every change leaves exactly one
SessionStatusChange row, a call that changes nothing leaves none, and every path (check-in,
taking it back, the bulk sweep) goes through it."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from coaching import services
from coaching.models import PlannedSession, SessionStatus, SessionStatusChange
from core.identity import services as identity_services

pytestmark = pytest.mark.django_db


@pytest.fixture
def learner():
    client = identity_services.api_client_create(name="status")
    return services.learner_create(client=client)


def _session(learner, hours=2):
    return services.session_schedule(learner=learner, start=timezone.now() + dt.timedelta(hours=hours),
                                     duration_minutes=30)


def _changes(session):
    return list(SessionStatusChange.objects.filter(session=session).order_by("pk")
                .values_list("from_status", "to_status", "source"))


def test_checkin_writes_one_audit_row_per_change_and_none_without_change(learner):
    session = _session(learner)
    services.checkin_log(learner=learner, outcome="completed", session=session)
    session.refresh_from_db()
    assert session.status == SessionStatus.COMPLETED and session.completed_at is not None
    assert session.completion_source == "self_report"
    assert _changes(session) == [("planned", "completed", "checkin")]

    # Reported done again: the status does not change, so no second row.
    services.checkin_log(learner=learner, outcome="completed", session=session)
    assert len(_changes(session)) == 1

    services.checkin_log(learner=learner, outcome="skipped", session=session, changed_by=services.StatusSource.API)
    session.refresh_from_db()
    assert session.status == SessionStatus.SKIPPED and session.completed_at is None and session.completion_source == ""
    assert _changes(session) == [("planned", "completed", "checkin"), ("completed", "skipped", "api")]


def test_checkin_without_session_writes_no_audit_row(learner):
    services.checkin_log(learner=learner, outcome="completed")
    assert not SessionStatusChange.objects.exists()


def test_checkin_undo_plans_the_session_again_with_one_audit_row(learner):
    session = _session(learner)
    checkin = services.checkin_log(learner=learner, outcome="completed", session=session)
    assert services.checkin_undo(learner=learner, checkin_id=checkin.pk) is not None
    session.refresh_from_db()
    assert session.status == SessionStatus.PLANNED and session.completed_at is None
    assert _changes(session) == [("planned", "completed", "checkin"), ("completed", "planned", "checkin")]
    assert services.checkin_undo(learner=learner, checkin_id=checkin.pk) is None
    assert len(_changes(session)) == 2


def test_status_set_same_status_writes_nothing(learner):
    session = _session(learner)
    returned = services.session_status_set(session=session, to_status=SessionStatus.PLANNED,
                                           source=services.StatusSource.STAFF)
    assert returned.status == SessionStatus.PLANNED
    assert _changes(session) == []


def test_status_set_keeps_the_given_completion_and_updates_the_callers_instance(learner):
    session = _session(learner)
    when = timezone.now() - dt.timedelta(minutes=3)
    services.session_status_set(session=session, to_status=SessionStatus.COMPLETED, source="calendar",
                                completed_at=when, completion_source="calendar", detail="x" * 300)
    assert session.status == SessionStatus.COMPLETED and session.completed_at == when
    change = SessionStatusChange.objects.get(session=session)
    assert (change.from_status, change.to_status, change.source, len(change.detail)) == (
        "planned", "completed", "calendar", 200)
    with pytest.raises(ValueError, match="unknown session status"):
        services.session_status_set(session=session, to_status="lost", source="staff")


def test_bulk_moves_only_rows_still_in_the_from_status_one_row_each(learner):
    planned = [_session(learner, hours=h) for h in (2, 3)]
    done = _session(learner, hours=4)
    services.checkin_log(learner=learner, outcome="completed", session=done)
    ids = [s.pk for s in planned] + [done.pk]

    moved = services.sessions_status_set_bulk(session_ids=ids, from_status=SessionStatus.PLANNED,
                                              to_status=SessionStatus.MISSED, source="missed_task")
    assert moved == 2
    assert set(PlannedSession.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"missed", "completed"}
    assert SessionStatusChange.objects.filter(source="missed_task").count() == 2
    assert _changes(done) == [("planned", "completed", "checkin")]

    # Nothing left to move: no rows.
    assert services.sessions_status_set_bulk(session_ids=ids, from_status=SessionStatus.PLANNED,
                                             to_status=SessionStatus.MISSED, source="missed_task") == 0
    assert services.sessions_status_set_bulk(session_ids=[], from_status=SessionStatus.PLANNED,
                                             to_status=SessionStatus.MISSED, source="missed_task") == 0
    assert SessionStatusChange.objects.count() == 3
    with pytest.raises(ValueError):
        services.sessions_status_set_bulk(session_ids=ids, from_status=SessionStatus.MISSED,
                                          to_status=SessionStatus.COMPLETED, source="staff")


def test_coach_message_post_appends_to_the_latest_conversation(learner):
    first = services.coach_message_post(learner=learner, content="hello", specialist="reminder")
    second = services.coach_message_post(learner=learner, content="again", specialist="reminder")
    assert first.conversation_id == second.conversation_id
    assert (second.role, second.content, second.specialist) == ("coach", "again", "reminder")
