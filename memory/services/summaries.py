"""Summaries: enqueue one when enough facts are unsummarised, store the one a model wrote
(exactly the facts it covers), and archive old facts a summary covers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from core.errors import ApplicationError
from core.outbox.services import outbox_enqueue
from memory import conf, rules
from memory.models import Fact, FactHistory, Summary


def summary_enqueue_if_due(*, learner_id: int) -> bool:
    pending = Fact.objects.filter(learner_id=learner_id, summary__isnull=True, archived=False,
                                  superseded_by__isnull=True)
    ids = list(pending.order_by("-id").values_list("id", flat=True)[: conf.summary_threshold()])
    if len(ids) < conf.summary_threshold():
        return False
    # Keyed by the newest unsummarised fact: the same state enqueues once.
    return outbox_enqueue(task_name="memory.summarize", args=[learner_id], queue="memory",
                          dedup_key=f"memory.summarize:{learner_id}:{ids[0]}") is not None


def summary_create(*, learner_id: int, fact_ids: Sequence[int], text: str, model: str) -> Summary | None:
    """Store a summary of exactly these facts. Returns None when another run summarised any of them
    meanwhile (concurrent summarise: the later one backs off, nothing doubles)."""
    text = rules.clean_text(text)
    if not text:
        raise ApplicationError("summary text is empty", code="empty_summary")
    with transaction.atomic():
        facts = list(Fact.objects.select_for_update().filter(pk__in=list(fact_ids), summary__isnull=True)
                     .order_by("created_at"))
        if len(facts) != len(fact_ids):
            transaction.set_rollback(True)
            return None
        summary = Summary.objects.create(
            learner_id=learner_id, period_start=facts[0].created_at, period_end=facts[-1].created_at,
            text=text[:4000], fact_count=len(facts), model=model[:120],
        )
        Fact.objects.filter(pk__in=[f.pk for f in facts]).update(summary=summary)
        FactHistory.objects.bulk_create([
            FactHistory(fact=f, change="summarised", before={"summary": None},
                        after={"summary": str(summary.public_id)}, service="memory.summarize") for f in facts
        ])
        facts_archive_covered(learner_id=learner_id)
    return summary


def facts_archive_covered(*, learner_id: int | None = None, now: datetime | None = None) -> int:
    """Archive facts older than BLOOM_ARCHIVE_AFTER_DAYS that a summary covers (the summary carries
    them on the read path; they stay searchable)."""
    cutoff = (now or timezone.now()) - timedelta(days=conf.archive_after_days())
    qs = Fact.objects.filter(archived=False, summary__isnull=False, created_at__lt=cutoff)
    if learner_id is not None:
        qs = qs.filter(learner_id=learner_id)
    with transaction.atomic():
        ids = list(qs.select_for_update().values_list("pk", flat=True))
        if not ids:
            return 0
        Fact.objects.filter(pk__in=ids).update(archived=True)
        FactHistory.objects.bulk_create([
            FactHistory(fact_id=i, change="archived", before={"archived": False}, after={"archived": True},
                        service="memory.archive") for i in ids
        ])
    return len(ids)
