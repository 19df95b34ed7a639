"""Transactional outbox: `outbox_enqueue` inside the caller's transaction, publish after commit,
`outbox_relay` re-publishes whatever a broker outage left behind, and `outbox_resend_lost`
publishes again what a broker lost after accepting it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.outbox.models import OutboxMessage

logger = logging.getLogger(__name__)


def outbox_enqueue(
    *, task_name: str, args: list[Any] | None = None, kwargs: dict[str, Any] | None = None,
    queue: str = "", dedup_key: str | None = None,
) -> OutboxMessage | None:
    """Record a task to run once the current transaction commits. Returns None when a message with
    the same `dedup_key` already exists (the work is already scheduled or done)."""
    try:
        with transaction.atomic():
            message = OutboxMessage.objects.create(
                task_name=task_name, args=list(args or []), kwargs=dict(kwargs or {}),
                queue=queue, dedup_key=dedup_key,
            )
    except IntegrityError:
        return None
    transaction.on_commit(lambda: outbox_publish(message_id=message.pk))
    return message


def outbox_publish(*, message_id: int) -> bool:
    """Send one pending message to the broker. A broker error leaves it pending for the relay."""
    # The project's Celery app (bloom.celery) is the current app once Django has loaded; core
    # must not import the project package above it.
    from celery import current_app as app

    message = OutboxMessage.objects.filter(pk=message_id, sent_at__isnull=True).first()
    if message is None:
        return False
    options: dict[str, Any] = {}
    if message.queue:
        options["queue"] = message.queue
    try:
        # A fresh connection, checked before publishing: a pooled connection to a broker that has
        # just gone away can appear to accept a publish that never reaches it (seen in the fault
        # suite), and then the row would be marked sent and the work lost.
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=3)
            app.send_task(message.task_name, args=message.args, kwargs=message.kwargs, retry=False,
                          connection=conn, **options)
    except Exception as exc:  # broker down: the row stays pending, nothing is lost
        OutboxMessage.objects.filter(pk=message.pk).update(
            attempts=message.attempts + 1, last_error=f"{type(exc).__name__}: {exc}"[:2000]
        )
        logger.warning("outbox: broker unavailable for %s (%s); left pending", message.task_name, exc)
        return False
    OutboxMessage.objects.filter(pk=message.pk).update(sent_at=timezone.now(), attempts=message.attempts + 1)
    return True


def outbox_relay(*, limit: int = 500) -> int:
    """Publish pending messages, oldest first; stops at the first broker failure. Returns sent count."""
    sent = 0
    pending = list(
        OutboxMessage.objects.filter(sent_at__isnull=True).order_by("created_at").values_list("pk", flat=True)[:limit]
    )
    for pk in pending:
        if not outbox_publish(message_id=pk):
            break
        sent += 1
    return sent


def outbox_resend(*, message_id: int) -> bool:
    """Publish a message again that was sent but whose work never happened (a broker that lost its
    queue: Redis without persistence, a flushed database). Only for idempotent tasks; the caller
    decides that the work is missing. Returns False when the broker is down (the row is then
    pending again and the relay sends it)."""
    OutboxMessage.objects.filter(pk=message_id, sent_at__isnull=False).update(sent_at=None)
    return outbox_publish(message_id=message_id)


# A check that tells, for the first arguments (ids, or lists of ids) of some sent tasks, which of
# them ran: the work leaves a marker row (an extraction run for a message, say), so "sent but
# never ran" shows.
DoneCheck = Callable[[list[Any]], Iterable[Any]]
RESEND_AFTER = timedelta(minutes=15)  # longer than a normal backlog; redelivery is harmless anyway
RESEND_WINDOW = timedelta(hours=6)  # how far back a sweep looks (it runs every 10 minutes)
RESEND_MAX_SENDS = 3  # a task that keeps not running (its target was deleted, parse errors) stops here


def outbox_resend_lost(*, done_checks: Mapping[str, DoneCheck], now: datetime | None = None,
                       after: timedelta = RESEND_AFTER, window: timedelta = RESEND_WINDOW,
                       max_sends: int = RESEND_MAX_SENDS) -> dict[str, int]:
    """Send again tasks the broker accepted but that never ran.

    The outbox guarantees a task reaches the broker; a broker that keeps its queue only in memory
    (Redis without persistence, as on this project's test machines) can still lose it in a
    restart. `done_checks` names the tasks whose work leaves a marker row (task name -> which of
    these ids ran), so a sent outbox row of such a task older than `after` without its marker is
    lost work: it is published again, at most `max_sends` times in all. Only for tasks that are
    idempotent per id, so a task that was merely slow runs once in effect."""
    now = now or timezone.now()
    out = {"checked": 0, "resent": 0, "gave_up": 0}
    for task_name, done in done_checks.items():
        rows = (OutboxMessage.objects.filter(task_name=task_name, sent_at__lt=now - after, sent_at__gte=now - window)
                .order_by("sent_at").values_list("pk", "args", "attempts"))
        batch: list[tuple[int, list, int]] = []
        for row in rows.iterator(chunk_size=500):
            batch.append(row)
            if len(batch) == 500:
                if not _resend_batch(batch, done, max_sends, out):
                    return out
                batch = []
        if batch and not _resend_batch(batch, done, max_sends, out):
            return out
    if out["resent"] or out["gave_up"]:
        logger.warning("outbox: re-sent %(resent)s lost tasks, gave up on %(gave_up)s", out)
    return out


def _hashable(first: Any) -> Any:
    """A first argument as a set member: a task taking a list of ids (one message for a batch)
    is compared by its tuple."""
    return tuple(first) if isinstance(first, list) else first


def _resend_batch(batch: list[tuple[int, list, int]], done: DoneCheck, max_sends: int, out: dict[str, int]) -> bool:
    finished = {_hashable(x) for x in done([args[0] for _, args, _ in batch if args])}
    for pk, args, attempts in batch:
        out["checked"] += 1
        if not args or _hashable(args[0]) in finished:
            continue
        if attempts >= max_sends:
            out["gave_up"] += 1
            continue
        if not outbox_resend(message_id=pk):
            return False  # broker down: the row is pending again and the relay takes it from here
        out["resent"] += 1
    return True
