"""Thin Celery tasks: take ids, re-fetch, return if gone, call services. Retries only for transient
model errors (LLMError.transient). Each task is idempotent."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.db.models import Count, Q

from core.identity.models import Message
from core.llm import LLMError, LLMInvalidOutput, call_context, chat, embed, entities_many, entity_model_ready
from core.outbox.services import outbox_resend_lost
from memory import conf, rules
from memory.extraction import FACTS_SCHEMA, extraction_messages, summary_messages
from memory.models import ExtractionRun, Fact
from memory.services.consolidation import facts_consolidate
from memory.services.entities import FactSpans, entities_record_many
from memory.services.hubness import hubness_refresh
from memory.services.ingest import extraction_record
from memory.services.summaries import facts_archive_covered, summary_create, summary_enqueue_if_due
from memory.services.tiers import tiers_apply

logger = logging.getLogger(__name__)
RETRY_DELAYS = (5, 30, 120)


def _retry(task: Any, exc: LLMError) -> None:
    attempt = task.request.retries
    if exc.transient and attempt < len(RETRY_DELAYS):
        raise task.retry(exc=exc, countdown=max(RETRY_DELAYS[attempt], exc.retry_after or 0))
    logger.warning("%s gave up: %s", task.name, exc)


@shared_task(name="memory.extract_facts", bind=True, max_retries=len(RETRY_DELAYS))
def extract_facts(self, message_id: int) -> dict[str, Any] | None:
    msg = Message.objects.filter(pk=message_id).select_related("conversation").first()
    if msg is None or msg.role != "learner" or ExtractionRun.objects.filter(message_id=message_id).exists():
        return None
    learner_id = msg.conversation.learner_id
    earlier = list(Message.objects.filter(conversation_id=msg.conversation_id, created_at__lte=msg.created_at)
                   .exclude(pk=msg.pk).order_by("-created_at", "-id")
                   .values_list("role", "content")[: conf.EXTRACTION_CONTEXT_MESSAGES])[::-1]
    try:
        with call_context(service="memory.extract_facts", learner_id=learner_id, priority="background",
                          conversation_id=msg.conversation_id, trace_id=msg.trace_id or ""):
            result = chat(extraction_messages(target=msg.content, context=earlier), schema=FACTS_SCHEMA,
                          options={"max_tokens": conf.EXTRACTION_MAX_TOKENS, "temperature": 0.0},
                          model=conf.extraction_model(), operation="chat")
            facts, dropped = rules.validate_model_facts(result.parsed, source=msg.content)
            vectors = embed([f.content for f in facts]) if facts else []
    except LLMInvalidOutput as exc:
        # The model layer recorded this call as a parse_error; nothing is written here.
        logger.info("memory.extract_facts: parse_error for message %s: %s", message_id, exc)
        return {"status": "parse_error"}
    except LLMError as exc:
        _retry(self, exc)
        return {"status": "failed", "error": type(exc).__name__}
    outcome = extraction_record(message_id=message_id, learner_id=learner_id, facts=facts,
                                         embeddings=vectors, dropped=dropped,
                                         model=result.response_model or result.request_model)
    return None if outcome is None else {"status": "ok", **outcome.as_dict(), "dropped": dropped}


@shared_task(name="memory.extract_entities", bind=True, max_retries=len(RETRY_DELAYS))
def extract_entities(self, fact_ids: list[int] | int) -> dict[str, int] | None:
    """Entities of the facts one ingest created (a whole batch: one message, one batched GLiNER
    call, one transaction). Re-fetches the facts and skips the ones gone or already done, so a
    re-delivered message writes nothing twice; retries only a transient model error. A single id
    is what messages queued before batching carry."""
    ids = [fact_ids] if isinstance(fact_ids, int) else [int(i) for i in fact_ids]
    if not entity_model_ready():
        # `make run` trains the entity model after the server is up; these facts keep no EntityRun,
        # so memory.entities_catch_up finds them once the model is there.
        logger.info("memory.extract_entities: entity model not ready yet; %s facts wait for the catch-up", len(ids))
        return {"facts": 0, "kept": 0, "dropped": 0, "skipped": len(ids), "failed": 0, "waiting": len(ids)}
    facts = list(Fact.objects.filter(pk__in=ids).exclude(entity_run__isnull=False).order_by("pk")
                 .only("id", "learner_id", "content"))
    if not facts:
        return None
    labels = conf.entity_labels()
    learners = {f.learner_id for f in facts}
    try:
        with call_context(service="memory.extract_entities",
                          learner_id=learners.pop() if len(learners) == 1 else None):
            found, failed = _spans_bisected(facts, labels)
    except LLMError as exc:
        _retry(self, exc)
        return None
    batch = []
    for fact, spans in found:
        kept, dropped = rules.validate_spans(fact.content, list(spans), labels=labels)
        batch.append(FactSpans(fact.pk, kept, dropped))
    runs = entities_record_many(found=batch) if batch else {}
    return {"facts": len(runs), "kept": sum(r.kept for r in runs.values()),
            "dropped": sum(r.dropped for r in runs.values()), "skipped": len(ids) - len(runs), "failed": failed}


CATCH_UP_BATCH = 32


@shared_task(name="memory.entities_catch_up")
def entities_catch_up(limit: int = 2000) -> dict[str, int] | None:
    """Entities of the facts that have none yet: the ones stored while the entity model was still
    being prepared (or whose entity message was lost). Idempotent: extract_entities re-fetches by
    id and skips facts already done; batches of one learner each, as ingest sends them. Queued by
    `bloom_models --background` when the model is ready; returns None while it is not."""
    if not entity_model_ready():
        return None
    waiting = list(Fact.objects.filter(entity_run__isnull=True).order_by("learner_id", "pk")
                   .values_list("learner_id", "pk")[:limit])
    out = {"facts": 0, "kept": 0, "dropped": 0, "failed": 0, "batches": 0}
    by_learner: dict[int, list[int]] = {}
    for learner_id, pk in waiting:
        by_learner.setdefault(learner_id, []).append(pk)
    for ids in by_learner.values():
        for start in range(0, len(ids), CATCH_UP_BATCH):
            done = extract_entities(ids[start:start + CATCH_UP_BATCH]) or {}
            out["batches"] += 1
            for key in ("facts", "kept", "dropped", "failed"):
                out[key] += int(done.get(key, 0))
    return out


def _spans_bisected(facts: list[Fact], labels: list[str]) -> tuple[list[tuple[Fact, list[Any]]], int]:
    """GLiNER's spans for each fact, one batched call. A non-transient error (malformed output, a
    text the model cannot take) on a batch splits it in halves, so one bad fact costs only itself:
    its entities are not extracted (logged, counted as failed; a re-delivery tries it again) and the
    other facts' are. A transient error is raised for the task to retry."""
    try:
        spans = entities_many([f.content for f in facts], labels, threshold=conf.entity_threshold())
        return list(zip(facts, spans, strict=True)), 0
    except LLMError as exc:
        if exc.transient:
            raise
        if len(facts) == 1:
            logger.warning("memory.extract_entities: fact %s skipped: %s", facts[0].pk, exc)
            return [], 1
    mid = len(facts) // 2
    left, left_failed = _spans_bisected(facts[:mid], labels)
    right, right_failed = _spans_bisected(facts[mid:], labels)
    return left + right, left_failed + right_failed


@shared_task(name="memory.summarize", bind=True, max_retries=len(RETRY_DELAYS))
def summarize(self, learner_id: int) -> dict[str, Any] | None:
    from memory.selectors import summaries_for, unsummarised_facts

    pending = unsummarised_facts(learner_id=learner_id)
    if len(pending) < conf.summary_threshold():
        return None
    previous = summaries_for(learner_id=learner_id).values_list("text", flat=True).first()
    batch = pending[:50]
    try:
        with call_context(service="memory.summarize", learner_id=learner_id, priority="background"):
            result = chat(summary_messages(facts=[(f.fact_type, f.content) for f in batch], previous=previous),
                          options={"max_tokens": conf.SUMMARY_MAX_TOKENS, "temperature": 0.0},
                          model=conf.summary_model())
    except LLMError as exc:
        _retry(self, exc)
        return None
    text = rules.clean_text(result.text or "")
    if not text:
        logger.warning("memory.summarize: empty summary for learner %s", learner_id)
        return None
    summary = summary_create(learner_id=learner_id, fact_ids=[f.pk for f in batch], text=text,
                                      model=result.response_model or result.request_model)
    return None if summary is None else {"summary_id": summary.pk, "facts": summary.fact_count}


@shared_task(name="memory.decay_tiers")
def decay_tiers() -> dict[str, int]:
    return tiers_apply()


@shared_task(name="memory.consolidate")
def consolidate() -> dict[str, int]:
    """Offline: merge near-duplicates per learner, recompute their hubness exactly, archive summarised
    old facts, and enqueue summaries that are due (a learner who stopped chatting still gets one)."""
    merged = 0
    learners = (Fact.objects.values("learner_id")
                .annotate(n=Count("id", filter=Q(superseded_by__isnull=True, surprise=False)))
                .filter(n__gte=2).values_list("learner_id", flat=True))
    for learner_id in learners:
        merged += facts_consolidate(learner_id=learner_id)["merged"]
        hubness_refresh(learner_id=learner_id)  # exact, after the merges changed who is live
        summary_enqueue_if_due(learner_id=learner_id)
    archived = facts_archive_covered()
    return {"merged": merged, "archived": archived}


# Memory tasks whose work leaves a marker row when it ran (task name -> which of these ids ran),
# so the outbox can tell "sent but never ran".
def _extracted(ids: list[int]) -> set[int]:
    return set(ExtractionRun.objects.filter(message_id__in=ids).values_list("message_id", flat=True))


def _entities_done(batches: list[list[int] | int]) -> list[list[int] | int]:
    """An entity message ran when none of its facts that still exist lacks its run (a deleted
    fact has nothing left to do)."""
    lists = [[b] if isinstance(b, int) else list(b) for b in batches]
    waiting = set(Fact.objects.filter(pk__in={i for ids in lists for i in ids}, entity_run__isnull=True)
                  .values_list("pk", flat=True))
    return [b for b, ids in zip(batches, lists, strict=True) if not waiting.intersection(ids)]


RESENDABLE_TASKS = {"memory.extract_facts": _extracted, "memory.extract_entities": _entities_done}


@shared_task(name="memory.resend_lost")
def resend_lost() -> dict[str, int]:
    """Periodic: memory tasks a broker lost after accepting them are sent again
    (core.outbox.services.outbox_resend_lost)."""
    return outbox_resend_lost(done_checks=RESENDABLE_TASKS)
