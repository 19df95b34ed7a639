"""Staff change a session's status in the plan admin: the change goes through the one audited
writer (source staff), and the audit trail itself cannot be written by hand."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from coaching import services
from coaching.models import PlannedSession, SessionStatusChange
from coaching.tests.conftest import make_client, onboarded_learner

pytestmark = pytest.mark.django_db


def test_a_status_changed_in_the_plan_admin_is_audited_as_staff(admin_client):
    client, _ = make_client()
    learner = onboarded_learner(client)
    session = services.session_schedule(learner=learner, start=timezone.now() + timedelta(days=1),
                                        duration_minutes=30, topic="scales")
    start = timezone.localtime(session.planned_start)
    data = {
        "sessions-TOTAL_FORMS": "1", "sessions-INITIAL_FORMS": "1", "sessions-MIN_NUM_FORMS": "0",
        "sessions-MAX_NUM_FORMS": "1000",
        "sessions-0-id": str(session.pk), "sessions-0-plan": str(session.plan_id),
        "sessions-0-planned_start_0": start.strftime("%Y-%m-%d"),
        "sessions-0-planned_start_1": start.strftime("%H:%M:%S"),
        "sessions-0-duration_minutes": "45", "sessions-0-topic": "scales", "sessions-0-status": "completed",
        "learner": str(learner.pk), "week_start": session.plan.week_start.isoformat(), "_save": "Save",
    }
    response = admin_client.post(reverse("admin:coaching_plan_change", args=[session.plan_id]), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    session = PlannedSession.objects.get(pk=session.pk)
    # Time and length are read-only in the admin (a move goes through services.session_move, audited,
    # and never takes a due session out of its week): the posted 45 is ignored.
    assert (session.status, session.duration_minutes, session.completion_source) == ("completed", 30, "staff")
    assert session.completed_at is not None
    assert list(SessionStatusChange.objects.filter(session=session).values_list("from_status", "to_status", "source")) \
        == [("planned", "completed", "staff")]


def test_the_audit_trail_is_read_only_in_the_admin(admin_client):
    assert admin_client.get(reverse("admin:coaching_sessionstatuschange_add")).status_code == 403
    assert admin_client.get(reverse("admin:coaching_sessionstatuschange_changelist")).status_code == 200
