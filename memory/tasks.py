"""Thin Celery tasks: take ids, re-fetch, return if gone, call services. Retries only for transient
model errors (LLMError.transient). Each task is idempotent."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.db.models import Count, Q

from core.identity.models import Message
from core.llm import LLMError, LLMInvalidOutput, call_context, chat, embed, entities
from core.outbox.services import outbox_resend_lost
from memory import conf, rules
from memory.extraction import FACTS_SCHEMA, extraction_messages, summary_messages
from memory.models import EntityRun, ExtractionRun, Fact
from memory.services.consolidation import facts_consolidate
from memory.services.entities import entities_record
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
                          operation="chat")
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
def extract_entities(self, fact_id: int) -> dict[str, int] | None:
    fact = Fact.objects.filter(pk=fact_id).only("id", "learner_id", "content").first()
    if fact is None or EntityRun.objects.filter(fact_id=fact_id).exists():
        return None
    labels = conf.entity_labels()
    try:
        with call_context(service="memory.extract_entities", learner_id=fact.learner_id):
            spans = entities(fact.content, labels, threshold=conf.entity_threshold())
    except LLMError as exc:
        _retry(self, exc)
        return None
    kept, dropped = rules.validate_spans(fact.content, list(spans), labels=labels)
    run = entities_record(fact_id=fact_id, spans=kept, dropped=dropped)
    return None if run is None else {"kept": run.kept, "dropped": run.dropped}


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
                          options={"max_tokens": conf.SUMMARY_MAX_TOKENS, "temperature": 0.0})
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
    """Offline: merge near-duplicates per learner, archive summarised old facts, and enqueue summaries
    that are due (a learner who stopped chatting still gets one)."""
    merged = 0
    learners = (Fact.objects.values("learner_id")
                .annotate(n=Count("id", filter=Q(superseded_by__isnull=True, surprise=False)))
                .filter(n__gte=2).values_list("learner_id", flat=True))
    for learner_id in learners:
        merged += facts_consolidate(learner_id=learner_id)["merged"]
        summary_enqueue_if_due(learner_id=learner_id)
    archived = facts_archive_covered()
    return {"merged": merged, "archived": archived}


# Memory tasks whose work leaves a marker row when it ran (task name -> which of these ids ran),
# so the outbox can tell "sent but never ran".
def _extracted(ids: list[int]) -> set[int]:
    return set(ExtractionRun.objects.filter(message_id__in=ids).values_list("message_id", flat=True))


def _entities_done(ids: list[int]) -> set[int]:
    return set(EntityRun.objects.filter(fact_id__in=ids).values_list("fact_id", flat=True))


RESENDABLE_TASKS = {"memory.extract_facts": _extracted, "memory.extract_entities": _entities_done}


@shared_task(name="memory.resend_lost")
def resend_lost() -> dict[str, int]:
    """Periodic: memory tasks a broker lost after accepting them are sent again
    (core.outbox.services.outbox_resend_lost)."""
    return outbox_resend_lost(done_checks=RESENDABLE_TASKS)
