"""Thin Celery tasks (routed to the `eval` queue by name): take ids, re-fetch, call a service."""

from __future__ import annotations

from celery import shared_task

from evaluation.models import EvalRun


@shared_task(name="evaluation.run_execute", acks_late=True, soft_time_limit=6 * 3600, time_limit=6 * 3600 + 60)
def run_execute_task(run_id: int) -> None:
    from evaluation.services.runs import run_execute

    run = EvalRun.objects.filter(pk=run_id, status=EvalRun.Status.PENDING).first()
    if run is None:  # gone, or already started by a redelivered message
        return
    run_execute(run=run)
