"""Celery application. Queues: `llm` (model-bound coaching work), `memory` (extraction,
summaries, entities), `eval` (evaluation runs). Tasks take ids, re-fetch and return if the row is
gone; enqueueing happens after commit (through the outbox, see bloom.outbox)."""

from __future__ import annotations

import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bloom.settings")

app = Celery("bloom")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_queues=(Queue("llm"), Queue("memory"), Queue("eval"), Queue("default")),
    task_default_queue="default",
    task_routes={
        "memory.*": {"queue": "memory"},
        "evaluation.*": {"queue": "eval"},
        "coaching.*": {"queue": "llm"},
    },
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_ignore_result=True,
    # A task is acknowledged only when it has finished, and a worker killed mid-task gives the
    # message back: every task is therefore idempotent.
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    # Model-bound tasks are long; prefetching more than one would starve other workers.
    worker_prefetch_multiplier=1,
    task_soft_time_limit=300,
    task_time_limit=360,
    broker_connection_retry_on_startup=True,
    broker_connection_timeout=3,
    broker_transport_options={"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1},
    beat_scheduler="django_celery_beat.schedulers:DatabaseScheduler",
    worker_hijack_root_logger=False,
    timezone="UTC",
)
app.autodiscover_tasks()
