"""Celery application. Queues: `memory` (extraction, summaries, entities), `eval` (evaluation
runs), `default` (research reminders and missed sessions, retention). Chat turns never queue: they
run in the web process. Tasks take ids, re-fetch and return if the row is
gone; enqueueing happens after commit (through the outbox, see core.outbox)."""

from __future__ import annotations

import os

from celery import Celery, Task
from celery.signals import celeryd_init
from django.conf import settings
from django.db import InterfaceError, OperationalError
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bloom.settings")


class BloomTask(Task):
    """Base class of every task. A database connection lost in the middle of a task (PostgreSQL
    restarted, a backend terminated) fails that task; `acks_late` only covers a lost worker, so
    the task is retried instead of being dropped. Safe because every task is idempotent and its
    writes are atomic (the failed attempt rolled back)."""

    autoretry_for = (OperationalError, InterfaceError)
    retry_backoff = 2
    retry_backoff_max = 60
    retry_jitter = True


app = Celery("bloom", task_cls=BloomTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_queues=(Queue("memory"), Queue("eval"), Queue("default")),
    task_default_queue="default",
    task_routes={
        "memory.*": {"queue": "memory"},
        "evaluation.*": {"queue": "eval"},
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
    # Merged with the settings' CELERY_BROKER_TRANSPORT_OPTIONS (visibility_timeout, filesystem
    # folders), which a plain key here would otherwise replace.
    broker_transport_options={**getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}),
                              "max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1},
    beat_scheduler="django_celery_beat.schedulers:DatabaseScheduler",
    worker_hijack_root_logger=False,
    timezone="UTC",
)
app.autodiscover_tasks()


@celeryd_init.connect
def _background_cpu_priority(**kwargs) -> None:
    """Workers run background work (extraction, summaries, evaluation); on a host they share with
    the web process, a learner waiting for a reply must get the CPU first. Lowest priority by
    default (BLOOM_WORKER_NICE=19; 0 keeps the inherited one): costs nothing when the CPU is
    otherwise idle. Pool children inherit it. `celeryd_init` fires for the `celery worker` command
    only, so a worker started inside another process (tests) leaves that process alone. Measured in
    bench/bench_memory_replay.py."""
    nice = int(getattr(settings, "BLOOM_WORKER_NICE", 19))
    if nice > 0:
        os.nice(nice)
