"""Many-item ingest with one broker connection for its follow-up tasks.

`services.facts_ingest` writes one outbox row for the entity extraction of all the facts it
created (`memory.extract_entities`, taking their ids) and one for a due summary, each published
after commit over a fresh, checked broker connection. Here the rows the batch wrote are published
together right after commit over ONE fresh connection, checked once; the per-row publish that the
service registered then finds its row sent and does nothing. (Before the entity task took a list,
a batch of 100 facts wrote 100 rows and made 100 publishes; see memory/README.md.)

The outbox guarantee is unchanged: the rows commit with the facts; a row is marked sent only
after its publish returned; a broker failure leaves that row and the ones after it pending for
the relay (`outbox_relay`), with the error recorded."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core.outbox.models import OutboxMessage
from memory.ingest import ingest_facts
from memory.services.ingest import IngestResult, entities_dedup_key

logger = logging.getLogger(__name__)


def ingest_batch(*, learner_id: int, items: list[dict[str, Any]], source_agent: str, service: str) -> IngestResult:
    """`ingest.ingest_facts` (same validation, rules and result) with the follow-ups published
    together after commit."""
    rows: list[int] = []
    started = timezone.now()
    with transaction.atomic():
        # Registered before the service's own per-row callbacks, so it runs first.
        transaction.on_commit(lambda: outbox_publish_together(message_ids=rows))
        result = ingest_facts(learner_id=learner_id, items=items, source_agent=source_agent, service=service)
        rows.extend(_followup_rows(learner_id=learner_id, created=result.created, since=started))
    return result


def _followup_rows(*, learner_id: int, created: Sequence[int], since: datetime) -> list[int]:
    """The pending outbox rows this ingest wrote: the entity extraction of its new facts and the
    learner's summary, if one became due."""
    if not created:
        return []
    summary = Q(dedup_key__startswith=f"memory.summarize:{learner_id}:", created_at__gte=since)
    return list(OutboxMessage.objects.filter(Q(dedup_key=entities_dedup_key(created)) | summary, sent_at__isnull=True)
                .order_by("pk").values_list("pk", flat=True))


def outbox_publish_together(*, message_ids: Sequence[int]) -> int:
    """Publish pending outbox rows over one fresh broker connection, in id order. Returns how
    many were sent; the rest stay pending (the relay sends them)."""
    from celery import current_app as app

    messages = list(OutboxMessage.objects.filter(pk__in=list(message_ids), sent_at__isnull=True).order_by("pk"))
    if not messages:
        return 0
    sent: list[int] = []
    try:
        # Fresh and checked, like outbox_publish: a pooled connection to a broker that has just
        # gone away can appear to accept a publish that never arrives.
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=3)
            for message in messages:
                options = {"queue": message.queue} if message.queue else {}
                app.send_task(message.task_name, args=message.args, kwargs=message.kwargs, retry=False,
                              connection=conn, **options)
                sent.append(message.pk)
    except Exception as exc:  # broker down: the unsent rows stay pending, nothing is lost
        failed = messages[len(sent)]
        OutboxMessage.objects.filter(pk=failed.pk).update(attempts=F("attempts") + 1,
                                                          last_error=f"{type(exc).__name__}: {exc}"[:2000])
        logger.warning("outbox: broker unavailable after %d of %d messages (%s); left pending", len(sent),
                       len(messages), exc)
    if sent:
        OutboxMessage.objects.filter(pk__in=sent).update(sent_at=timezone.now(), attempts=F("attempts") + 1)
    return len(sent)
