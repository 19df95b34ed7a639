"""Periodic tasks as django_celery_beat rows, created idempotently after migrate so staff can edit
intervals (or disable them) in the admin without a deploy."""

from __future__ import annotations

from typing import Any

PERIODIC_TASKS: list[tuple[str, str, int]] = [
    # (row name, task name, every N minutes)
    ("research: mark missed sessions", "research.sessions_mark_missed", 15),
    # Must be shorter than BLOOM_REMINDER_WINDOW_MINUTES or a learner's slot can be skipped.
    ("research: send due check-in reminders", "research.reminders_send_due", 15),
    # An enrolment made ahead of its study's start switches the delivered treatment at the start.
    ("research: apply enrolment arms at study start", "research.enrollment_arms_apply", 15),
]


def register_periodic_tasks(sender: Any = None, using: str = "default", **kwargs: Any) -> None:
    from django.apps import apps

    if not apps.is_installed("django_celery_beat"):
        return
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    for name, task, minutes in PERIODIC_TASKS:
        if PeriodicTask.objects.using(using).filter(name=name).exists():
            continue  # keep whatever staff edited
        schedule, _ = IntervalSchedule.objects.using(using).get_or_create(
            every=minutes, period=IntervalSchedule.MINUTES
        )
        PeriodicTask.objects.using(using).create(name=name, task=task, interval=schedule, queue="default")
