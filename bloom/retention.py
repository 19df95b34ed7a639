"""Retention of message content (`BLOOM_MESSAGE_RETENTION_DAYS`).

Message text older than the retention period is blanked; the rows stay, so counts, statuses,
timestamps, routing records and research exports (which never carry free text) are unchanged.
The copies of that text elsewhere go too: a turn's context snapshot and the prompt/response
content of telemetry rows of the same age. Long-term memory facts are not touched: they are the
learner's memory, removed by forgetting the learner (memory.services.forget.learner_forget).

Runs as the periodic task `bloom.retention_blank_messages` (a django_celery_beat row registered
after migrate, idempotently; staff can change its interval or disable it in the admin). With the
setting at 0 (the default) nothing is ever blanked."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from coaching.models import Message, Turn
from telemetry.models import ModelCall

TASK_NAME = "bloom.retention_blank_messages"
PERIODIC_TASK_ROW = "retention: blank old message text"
EVERY_SECONDS = 6 * 60 * 60


@transaction.atomic
def messages_blank_expired(*, days: int | None = None, now: datetime | None = None) -> dict[str, int]:
    """Blank message text older than `days` (default: the setting). Idempotent; returns counts."""

    days = settings.BLOOM_MESSAGE_RETENTION_DAYS if days is None else days
    if days <= 0:
        return {"messages": 0, "turns": 0, "telemetry": 0}
    cutoff = (now or timezone.now()) - timedelta(days=days)
    messages = Message.objects.filter(created_at__lt=cutoff).exclude(content="").update(content="")
    turns = Turn.objects.filter(created_at__lt=cutoff).exclude(context_snapshot="").update(context_snapshot="")
    calls = (ModelCall.objects.filter(created_at__lt=cutoff)
             .exclude(prompt_content="", response_content="")
             .update(prompt_content="", response_content=""))
    return {"messages": messages, "turns": turns, "telemetry": calls}


def register_periodic_task(sender=None, using: str = "default", **kwargs) -> None:
    """post_migrate hook: create the beat row once; never overwrite one staff edited."""
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    if PeriodicTask.objects.using(using).filter(name=PERIODIC_TASK_ROW).exists():
        return
    every, _ = IntervalSchedule.objects.using(using).get_or_create(every=EVERY_SECONDS,
                                                                   period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.using(using).create(name=PERIODIC_TASK_ROW, task=TASK_NAME, interval=every,
                                             queue="default")
