"""Project-level periodic tasks (found by Celery's autodiscovery of installed apps)."""

from __future__ import annotations

from celery import shared_task

from bloom.retention import TASK_NAME, messages_blank_expired


@shared_task(name=TASK_NAME)
def retention_blank_messages() -> dict[str, int]:
    return messages_blank_expired()


# --- liveness probe: proves a worker runs tasks, reaches the database and publishes via the outbox
PING_TASK = "bloom.ping"
PONG_TASK = "bloom.pong"


@shared_task(name=PING_TASK)
def ping(token: str) -> str:
    """Answer through the outbox: a committed `bloom.pong` row keyed by the token is the proof
    (seen by whoever enqueued the ping, in any process) that a worker ran this task."""
    from django.db import transaction

    from core.outbox.services import outbox_enqueue

    with transaction.atomic():
        outbox_enqueue(task_name=PONG_TASK, args=[token], dedup_key=f"{PONG_TASK}:{token}")
    return token


@shared_task(name=PONG_TASK)
def pong(token: str) -> str:
    return token
