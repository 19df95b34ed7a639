"""Missed-session and reminder periodic work, and their beat registration."""

from __future__ import annotations

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.test import override_settings

from coaching.models import Message, PlannedSession, SessionStatusChange
from coaching.research import services, tasks
from coaching.research.models import ReminderDelivery
from coaching.research.tests import factories as f
from coaching.research.tests.factories import INTENDED_USE

pytestmark = pytest.mark.django_db


@override_settings(BLOOM_MISSED_GRACE_MINUTES=60)
def test_sessions_mark_missed_after_duration_plus_grace_only():
    learner = f.learner(f.client())
    now = dt.datetime(2026, 5, 5, 12, 0, tzinfo=dt.UTC)
    overdue = f.session(learner, now - dt.timedelta(minutes=91), minutes=30)  # ended 61 min ago
    in_grace = f.session(learner, now - dt.timedelta(minutes=89), minutes=30)  # ended 59 min ago
    long_one = f.session(learner, now - dt.timedelta(minutes=200), minutes=180)  # ended 20 min ago
    done = f.session(learner, now - dt.timedelta(days=1), status="completed")
    from coaching.models import CheckIn

    reported = f.session(learner, now - dt.timedelta(days=1))
    CheckIn.objects.create(learner=learner, session=reported, outcome="completed")
    assert services.sessions_mark_missed(now=now) == 1
    statuses = {s.pk: s.status for s in PlannedSession.objects.all()}
    assert statuses[overdue.pk] == "missed"
    assert statuses[in_grace.pk] == statuses[long_one.pk] == statuses[reported.pk] == "planned"
    assert statuses[done.pk] == "completed"
    assert services.sessions_mark_missed(now=now) == 0  # idempotent
    change = SessionStatusChange.objects.get()
    assert (change.session_id, change.from_status, change.to_status, change.source) == (
        overdue.pk, "planned", "missed", "missed_task")



def test_sessions_mark_missed_writes_one_audit_row_per_session_it_moves():
    learner = f.learner(f.client())
    now = dt.datetime(2026, 5, 5, 12, 0, tzinfo=dt.UTC)
    due = [f.session(learner, now - dt.timedelta(days=d), minutes=30) for d in (1, 2, 3)]
    assert services.sessions_mark_missed(now=now) == 3
    rows = SessionStatusChange.objects.filter(source="missed_task")
    assert sorted(rows.values_list("session_id", flat=True)) == sorted(s.pk for s in due)
    assert services.sessions_mark_missed(now=now + dt.timedelta(days=1)) == 0
    assert SessionStatusChange.objects.count() == 3

def _enrolled(tz: str, best_time: str):
    study = services.study_create(**INTENDED_USE, name=f"rem-{tz}-{best_time}", start_date=dt.date(2026, 3, 2))
    learner = f.learner(f.client(), tz=tz, best_time=best_time)
    services.enrollment_create(study=study, learner=learner, enrolled_at=f.local(tz, 2026, 3, 2, 9))
    return learner


@override_settings(BLOOM_REMINDER_HOOK="none")
def test_reminder_at_best_time_in_learner_timezone_once():
    learner = _enrolled("America/New_York", "evening")  # 19:00 local
    f.session(learner, f.local("America/New_York", 2026, 3, 9, 20, 0), topic="scales")
    before = f.local("America/New_York", 2026, 3, 9, 18, 50)
    at = f.local("America/New_York", 2026, 3, 9, 19, 10)
    assert services.reminders_send_due(now=before) == 0
    assert services.reminders_send_due(now=at) == 1
    assert services.reminders_send_due(now=at + dt.timedelta(minutes=15)) == 0  # same slot: no duplicate
    delivery = ReminderDelivery.objects.get()
    assert (delivery.slot, delivery.channel, delivery.status) == ("checkin:2026-03-09", "in_app", "sent")
    message = Message.objects.get(pk=delivery.message_id)
    assert message.role == "coach" and message.conversation.learner_id == learner.pk
    assert "scales at 20:00" in message.content  # local time in the text, DST already begun


@override_settings(BLOOM_REMINDER_HOOK="none")
def test_no_reminder_without_a_session_today_or_after_withdrawal():
    learner = _enrolled("UTC", "morning")
    at = f.local("UTC", 2026, 3, 10, 8, 30)
    assert services.reminders_send_due(now=at) == 0
    f.session(learner, f.local("UTC", 2026, 3, 10, 17, 0))
    learner.enrollments.update(withdrawn_at=at)
    assert services.reminders_send_due(now=at) == 0
    assert not Message.objects.exists()


class _Hook(BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Hook.received.append(json.loads(body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_webhook_delivery_via_outbox_task():
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Hook.received = []
    try:
        with override_settings(BLOOM_REMINDER_HOOK=f"http://127.0.0.1:{server.server_port}/hook"):
            learner = _enrolled("Asia/Tokyo", "morning")
            f.session(learner, f.local("Asia/Tokyo", 2026, 3, 10, 9, 0))
            assert services.reminders_send_due(now=f.local("Asia/Tokyo", 2026, 3, 10, 8, 5)) == 1
            delivery = ReminderDelivery.objects.get()
            assert (delivery.channel, delivery.status) == ("webhook", "pending")
            assert tasks.reminder_deliver(delivery.pk) == "sent"
            assert tasks.reminder_deliver(delivery.pk) == "gone"  # idempotent
    finally:
        server.shutdown()
    assert len(_Hook.received) == 1
    assert _Hook.received[0]["learner"] == str(learner.research_id)
    delivery.refresh_from_db()
    assert _Hook.received[0]["message_id"] == str(delivery.message.public_id)  # never the integer key
    assert delivery.status == "sent" and delivery.sent_at is not None


def test_webhook_failure_is_recorded():
    with override_settings(BLOOM_REMINDER_HOOK="http://127.0.0.1:9/nothing-listens"):
        learner = _enrolled("UTC", "midday")
        f.session(learner, f.local("UTC", 2026, 3, 10, 13, 0))
        services.reminders_send_due(now=f.local("UTC", 2026, 3, 10, 12, 1))
        delivery = ReminderDelivery.objects.get()
        assert services.reminder_deliver(delivery_id=delivery.pk) == "failed"
    delivery.refresh_from_db()
    assert delivery.status == "failed" and delivery.error


def test_periodic_tasks_registered_in_beat_table():
    from django_celery_beat.models import PeriodicTask

    from coaching.research.schedule import register_periodic_tasks

    names = set(PeriodicTask.objects.values_list("task", flat=True))
    assert {"research.sessions_mark_missed", "research.reminders_send_due"} <= names
    PeriodicTask.objects.filter(task="research.sessions_mark_missed").update(enabled=False)
    register_periodic_tasks()  # re-running (every migrate) keeps staff edits and adds no duplicates
    rows = PeriodicTask.objects.filter(task="research.sessions_mark_missed")
    assert rows.count() == 1 and rows.get().enabled is False
