"""A real Celery worker (Redis under `make test`, the filesystem broker in the embedded smoke run)
executes a task enqueued through the transactional outbox, including after a broker outage."""

from __future__ import annotations

import time
import uuid

import pytest
from django.db import transaction

from bloom.tasks import PING_TASK, PONG_TASK
from core.outbox.models import OutboxMessage
from core.outbox.services import outbox_enqueue, outbox_relay


def _wait_for_pong(token: str, timeout: float = 60.0) -> OutboxMessage:
    """The ping task answers by writing (and publishing) a pong outbox row: seeing it committed
    and sent proves the worker ran the task, reached the database and the broker."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = OutboxMessage.objects.filter(dedup_key=f"{PONG_TASK}:{token}", sent_at__isnull=False).first()
        if row is not None:
            return row
        time.sleep(0.2)
    raise AssertionError(f"no worker answered ping {token} within {timeout:.0f}s")


def _enqueue_ping(token: str) -> OutboxMessage:
    with transaction.atomic():
        message = outbox_enqueue(task_name=PING_TASK, args=[token], dedup_key=f"{PING_TASK}:{token}")
    assert message is not None
    return message


def test_real_redis_worker_executes_task_via_outbox(real_celery_worker, requires_postgres, settings):
    assert settings.CELERY_BROKER_URL.startswith("redis://"), "the integration suite runs on Redis"
    token = uuid.uuid4().hex
    message = _enqueue_ping(token)
    message.refresh_from_db()
    assert message.sent_at is not None  # published on commit
    pong = _wait_for_pong(token)
    assert pong.args == [token]


def test_outbox_relays_pending_messages_after_broker_outage(real_celery_worker, requires_postgres, monkeypatch,
                                                             broker_down):
    # A broker nobody listens on: publishing fails, the message stays pending, nothing is lost.
    token = uuid.uuid4().hex
    message = _enqueue_ping(token)
    message.refresh_from_db()
    assert message.sent_at is None
    assert message.attempts == 1 and message.last_error
    assert not OutboxMessage.objects.filter(dedup_key=f"{PONG_TASK}:{token}").exists()

    # The broker is back: the relay publishes what was left, and the real worker runs it.
    monkeypatch.undo()
    assert outbox_relay() >= 1
    message.refresh_from_db()
    assert message.sent_at is not None
    _wait_for_pong(token)


def test_duplicate_enqueue_with_same_key_runs_once(real_celery_worker, requires_postgres):
    token = uuid.uuid4().hex
    _enqueue_ping(token)
    with transaction.atomic():
        assert outbox_enqueue(task_name=PING_TASK, args=[token], dedup_key=f"{PING_TASK}:{token}") is None
    _wait_for_pong(token)
    assert OutboxMessage.objects.filter(dedup_key=f"{PING_TASK}:{token}").count() == 1


@pytest.mark.embedded
def test_embedded_worker_executes_task_via_filesystem_broker(real_celery_worker, settings):
    assert settings.CELERY_BROKER_URL.startswith("filesystem://")
    assert settings.DB_VENDOR == "sqlite"
    token = uuid.uuid4().hex
    _enqueue_ping(token)
    pong = _wait_for_pong(token)
    assert pong.args == [token]
