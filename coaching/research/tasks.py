"""Thin Celery tasks: take ids, re-fetch, call a service. Named `research.*` so they route to the
default queue (no model is involved), not the `llm` queue that `coaching.*` tasks use."""

from __future__ import annotations

from celery import shared_task

from coaching.research import services


@shared_task(name="research.sessions_mark_missed")
def sessions_mark_missed() -> int:
    return services.sessions_mark_missed()


@shared_task(name="research.reminders_send_due")
def reminders_send_due() -> int:
    return services.reminders_send_due()


@shared_task(name="research.reminder_deliver", autoretry_for=(OSError,), retry_backoff=True, max_retries=3)
def reminder_deliver(delivery_id: int) -> str:
    return services.reminder_deliver(delivery_id=delivery_id)


@shared_task(name="research.enrollment_arms_apply")
def enrollment_arms_apply() -> int:
    return services.enrollment_arms_apply()
