"""Memory writes. Every change to a fact writes a FactHistory row in the same transaction.
Keyword-only, typed, atomic. No model calls here except the embedding in `facts_ingest_text`-style
helpers that the API uses (embedding is allowed on the request path; chat models are not)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from bloom.outbox.models import OutboxMessage
from bloom.outbox.services import outbox_enqueue, outbox_resend
from memory import conf, rules
from memory.models import Entity, EntityRun, ExtractionRun, Fact, FactHistory, Mention, Relation, Summary

logger = logging.getLogger(__name__)


def _snapshot(fact: Fact) -> dict[str, Any]:
    return {"fact_type": fact.fact_type, "content": fact.content, "confidence": round(fact.confidence, 4),
            "tier": fact.tier, "archived": fact.archived, "access_count": fact.access_count,
            "surprise": fact.surprise, "superseded_by": fact.superseded_by_id, "summary": fact.summary_id}


def _history(fact: Fact, *, change: str, before: dict | None, after: dict | None, service: str) -> FactHistory:
    return FactHistory.objects.create(fact=fact, change=change, before=before, after=after, service=service)


# --- similarity ------------------------------------------------------------------------------------
def _as_array(vec: Any) -> np.ndarray:
    arr = np.asarray(vec if not isinstance(vec, str) else _parse_vector_text(vec), dtype=np.float32)
    return arr


def _parse_vector_text(text: str) -> list[float]:
    # SQLite stores pgvector values as '[0.1,0.2,...]'.
    return [float(x) for x in text.strip("[] ").split(",") if x.strip()]


def cosine(a: Any, b: Any) -> float:
    va, vb = _as_array(a), _as_array(b)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    if na == 0 or nb == 0:
        return 0.0
    return float(np.dot(va, vb) / (na * nb))


def similar_facts(*, learner_id: int, embedding: Sequence[float], limit: int = 5) -> list[tuple[Fact, float]]:
    """Most similar live (not superseded) facts of a learner, exact (per-learner scans are small)."""
    qs = Fact.objects.filter(learner_id=learner_id, superseded_by__isnull=True, embedding__isnull=False)
    if settings.DB_VENDOR == "postgresql":
        from pgvector.django import CosineDistance

        rows = list(qs.annotate(distance=CosineDistance("embedding", list(embedding))).order_by("distance")[:limit])
        return [(f, 1.0 - float(f.distance)) for f in rows]
    scored = [(f, cosine(f.embedding, embedding)) for f in qs]
    scored.sort(key=lambda t: -t[1])
    return scored[:limit]


# --- ingest ----------------------------------------------------------------------------------------
@dataclass
class IngestResult:
    created: list[int] = field(default_factory=list)
    strengthened: list[int] = field(default_factory=list)
    surprises: list[int] = field(default_factory=list)
    duplicates: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"created": self.created, "strengthened": self.strengthened, "surprises": self.surprises,
                "duplicates": self.duplicates}


def _strengthen(old: Fact, fact: rules.CleanFact, similarity: float, *, rule: str, now: datetime,
                source_message_id: int | None, service: str, result: IngestResult) -> None:
    """Strengthen, never replace: the older wording stays; confidence and recency go up."""
    before = _snapshot(old)
    Fact.objects.filter(pk=old.pk).update(
        confidence=min(1.0, max(old.confidence, fact.confidence) + 0.05),
        access_count=F("access_count") + 1, last_accessed_at=now,
    )
    old.refresh_from_db()
    _history(old, change="strengthened", before=before,
             after={**_snapshot(old), "by_content": fact.content, "cosine": round(similarity, 4), "rule": rule,
                    "source_message": source_message_id}, service=service)
    result.strengthened.append(old.pk)


def _ingest_one(*, learner_id: int, fact: rules.CleanFact, embedding: list[float], source_message_id: int | None,
                source_agent: str, service: str, now: datetime, result: IngestResult) -> None:
    h = rules.content_hash(fact.content)
    if Fact.objects.filter(learner_id=learner_id, content_hash=h).exists():
        result.duplicates += 1  # exact duplicate: dropped
        return
    candidates = similar_facts(learner_id=learner_id, embedding=embedding)
    best = candidates[0] if candidates else None
    if (best is not None and best[1] >= conf.dedup_cosine()
            and rules.conflict_reason(best[0].content, fact.content) is None):
        _strengthen(best[0], fact, best[1], rule="near_duplicate", now=now, source_message_id=source_message_id,
                    service=service, result=result)
        return
    # Below the near-duplicate line, the most similar candidates decide (code rules, in order of
    # similarity): a conflict makes a surprise; a restatement strengthens the older fact.
    conflict: tuple[Fact, float, str] | None = None
    for cand, sim in candidates:
        if sim < conf.surprise_cosine():
            break
        reason = rules.conflict_reason(cand.content, fact.content)
        if reason:
            conflict = (cand, sim, reason)
            break
        if rules.restates(cand.content, fact.content):
            _strengthen(cand, fact, sim, rule="restates", now=now, source_message_id=source_message_id,
                        service=service, result=result)
            return
    try:
        with transaction.atomic():
            new = Fact.objects.create(
                learner_id=learner_id, fact_type=fact.fact_type, content=fact.content, confidence=fact.confidence,
                source_message_id=source_message_id, source_agent=source_agent[:40], embedding=embedding,
                content_hash=h, last_accessed_at=now, tier="hot",
                surprise=conflict is not None, conflicts_with=conflict[0] if conflict else None,
                surprise_reason=conflict[2] if conflict else "",
            )
    except IntegrityError:  # a concurrent writer stored the same text first
        result.duplicates += 1
        return
    after = _snapshot(new)
    if conflict:
        after.update({"conflicts_with": conflict[0].pk, "cosine": round(conflict[1], 4), "rule": conflict[2]})
    _history(new, change="surprise" if conflict else "created", before=None, after=after, service=service)
    result.created.append(new.pk)
    if conflict:
        result.surprises.append(new.pk)


def facts_ingest(*, learner_id: int, facts: Sequence[rules.CleanFact], embeddings: Sequence[Sequence[float]],
                 source_message_id: int | None = None, source_agent: str = "", service: str) -> IngestResult:
    """Store validated facts for a learner: exact duplicates dropped, near duplicates strengthen the
    older fact, conflicting near-matches are stored as surprises. Enqueues entity extraction for new
    facts and a summary when the threshold is reached (outbox, after commit)."""
    if len(facts) != len(embeddings):
        raise ValueError("one embedding per fact")
    now = timezone.now()
    result = IngestResult()
    with transaction.atomic():
        for fact, emb in zip(facts, embeddings, strict=True):
            _ingest_one(learner_id=learner_id, fact=fact, embedding=list(emb), source_message_id=source_message_id,
                        source_agent=source_agent, service=service, now=now, result=result)
        _enqueue_followups(learner_id=learner_id, created=result.created)
    return result


def _enqueue_followups(*, learner_id: int, created: list[int]) -> None:
    for fact_id in created:
        outbox_enqueue(task_name="memory.extract_entities", args=[fact_id], queue="memory",
                       dedup_key=f"memory.extract_entities:{fact_id}")
    if created:
        summary_enqueue_if_due(learner_id=learner_id)


def summary_enqueue_if_due(*, learner_id: int) -> bool:
    pending = Fact.objects.filter(learner_id=learner_id, summary__isnull=True, archived=False,
                                  superseded_by__isnull=True)
    ids = list(pending.order_by("-id").values_list("id", flat=True)[: conf.summary_threshold()])
    if len(ids) < conf.summary_threshold():
        return False
    # Keyed by the newest unsummarised fact: the same state enqueues once.
    return outbox_enqueue(task_name="memory.summarize", args=[learner_id], queue="memory",
                          dedup_key=f"memory.summarize:{learner_id}:{ids[0]}") is not None


def extraction_record(*, message_id: int, learner_id: int, facts: Sequence[rules.CleanFact],
                      embeddings: Sequence[Sequence[float]], dropped: int, model: str,
                      source_agent: str = "extractor") -> IngestResult | None:
    """Idempotent per message: the marker row and the facts commit together; a second run for the
    same message finds the marker and writes nothing (returns None)."""
    with transaction.atomic():
        try:
            with transaction.atomic():
                run = ExtractionRun.objects.create(message_id=message_id, learner_id=learner_id, dropped=dropped,
                                                   model=model[:120])
        except IntegrityError:
            return None
        result = facts_ingest(learner_id=learner_id, facts=facts, embeddings=embeddings,
                              source_message_id=message_id, source_agent=source_agent,
                              service="memory.extract_facts")
        ExtractionRun.objects.filter(pk=run.pk).update(
            created=len(result.created), strengthened=len(result.strengthened), surprises=len(result.surprises),
            duplicates=result.duplicates,
        )
    return result


def facts_mark_accessed(*, fact_ids: Sequence[int], at: datetime | None = None) -> int:
    """Reading a fact counts as access: one UPDATE for all of them (decay restarts)."""
    if not fact_ids:
        return 0
    return Fact.objects.filter(pk__in=list(fact_ids)).update(
        access_count=F("access_count") + 1, last_accessed_at=at or timezone.now()
    )


def fact_delete(*, fact_id: int) -> bool:
    deleted, _ = Fact.objects.filter(pk=fact_id).delete()
    return deleted > 0


def learner_forget(*, learner_id: int) -> dict[str, int]:
    """Delete everything memory holds about a learner and anonymise their telemetry rows."""
    counts: dict[str, int] = {}
    with transaction.atomic():
        for name, model in (("relations", Relation), ("entities", Entity), ("facts", Fact),
                            ("summaries", Summary), ("extractions", ExtractionRun)):
            _, per_model = model.objects.filter(learner_id=learner_id).delete()
            counts[name] = per_model.get(model._meta.label, 0)  # cascaded rows are not double-counted
    try:
        from telemetry.services import telemetry_anonymise_learner
    except ImportError:  # telemetry app without the service: nothing to anonymise there
        counts["telemetry_anonymised"] = 0
    else:
        counts["telemetry_anonymised"] = int(telemetry_anonymise_learner(learner_id=learner_id) or 0)
    return counts


# --- summaries -------------------------------------------------------------------------------------
def summary_create(*, learner_id: int, fact_ids: Sequence[int], text: str, model: str) -> Summary | None:
    """Store a summary of exactly these facts. Returns None when another run summarised any of them
    meanwhile (concurrent summarise: the later one backs off, nothing doubles)."""
    text = rules.clean_text(text)
    if not text:
        raise rules.MemoryInputError("summary text is empty", code="empty_summary")
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
            FactHistory(fact=f, change="summarised", before={"summary": None}, after={"summary": summary.pk},
                        service="memory.summarize") for f in facts
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


# --- tiers -----------------------------------------------------------------------------------------
def tiers_apply(*, now: datetime | None = None, batch: int = 5000) -> dict[str, int]:
    """Move facts between hot/warm/cold by their decay score (computed from last access). Each move
    is a history row. Runs on the beat schedule."""
    now = now or timezone.now()
    hot_cut = now - timedelta(days=rules.tier_age_days(conf.TIER_HOT_MIN))
    warm_cut = now - timedelta(days=rules.tier_age_days(conf.TIER_WARM_MIN))
    targets = {
        "hot": Fact.objects.filter(last_accessed_at__gte=hot_cut).exclude(tier="hot"),
        "warm": Fact.objects.filter(last_accessed_at__lt=hot_cut, last_accessed_at__gte=warm_cut).exclude(tier="warm"),
        "cold": Fact.objects.filter(last_accessed_at__lt=warm_cut).exclude(tier="cold"),
    }
    moved: dict[str, int] = {}
    for tier, qs in targets.items():
        total = 0
        while True:
            with transaction.atomic():
                rows = list(qs.select_for_update(skip_locked=True)
                            .values_list("pk", "tier", "last_accessed_at")[:batch])
                if not rows:
                    break
                Fact.objects.filter(pk__in=[r[0] for r in rows]).update(tier=tier)
                FactHistory.objects.bulk_create([
                    FactHistory(fact_id=pk, change="tier", before={"tier": old},
                                after={"tier": tier, "decay": round(rules.decay_score(last, now), 4)},
                                service="memory.decay_tiers")
                    for pk, old, last in rows
                ])
                total += len(rows)
        moved[tier] = total
    return moved


# --- consolidation (offline) -----------------------------------------------------------------------
def facts_consolidate(*, learner_id: int) -> dict[str, int]:
    """Merge near-duplicates that slipped in (e.g. concurrent extraction): the newer fact is marked
    superseded by the older (never deleted), the older is strengthened. Surprises are left for review."""
    facts = list(Fact.objects.filter(learner_id=learner_id, superseded_by__isnull=True, surprise=False,
                                     embedding__isnull=False).order_by("created_at", "id"))
    merged = 0
    if len(facts) < 2:
        return {"merged": 0}
    mat = np.vstack([_as_array(f.embedding) for f in facts])
    mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-9)
    sims = mat @ mat.T
    gone: set[int] = set()
    threshold = conf.dedup_cosine()
    with transaction.atomic():
        for i, older in enumerate(facts):
            if i in gone:
                continue
            for j in range(i + 1, len(facts)):
                if j in gone or sims[i, j] < threshold:
                    continue
                newer = facts[j]
                if rules.conflict_reason(older.content, newer.content):
                    continue
                before = _snapshot(newer)
                Fact.objects.filter(pk=newer.pk).update(superseded_by=older, archived=True)
                newer.superseded_by_id, newer.archived = older.pk, True
                _history(newer, change="superseded", before=before, after=_snapshot(newer),
                         service="memory.consolidate")
                ob = _snapshot(older)
                older.confidence = min(1.0, max(older.confidence, newer.confidence) + 0.05)
                older.access_count += newer.access_count
                Fact.objects.filter(pk=older.pk).update(confidence=older.confidence, access_count=older.access_count)
                _history(older, change="merged", before=ob, after={**_snapshot(older), "merged": newer.pk},
                         service="memory.consolidate")
                gone.add(j)
                merged += 1
    return {"merged": merged}


# --- entities --------------------------------------------------------------------------------------
def entities_record(*, fact_id: int, spans: Sequence[rules.Span], dropped: int) -> EntityRun | None:
    """Store validated mentions of one fact, canonicalised per learner, and co-occurrence relations.
    Idempotent per fact (EntityRun marker). Spans must already be validated against the fact text;
    they are re-checked here so the invariant holds whatever the caller did."""
    with transaction.atomic():
        fact = Fact.objects.select_for_update().filter(pk=fact_id).first()
        if fact is None or EntityRun.objects.filter(fact_id=fact_id).exists():
            return None
        kept, extra = rules.validate_spans(fact.content, list(spans))
        dropped += extra
        entity_ids: list[int] = []
        for sp in kept:
            canon = rules.canonical_entity(sp.text)[:200]
            entity, _ = Entity.objects.get_or_create(learner_id=fact.learner_id, canonical_name=canon, label=sp.label,
                                                     defaults={"display_name": sp.text[:200]})
            _, created = Mention.objects.get_or_create(entity=entity, fact=fact, start=sp.start, end=sp.end,
                                                       defaults={"text": sp.text, "score": sp.score})
            if created:
                Entity.objects.filter(pk=entity.pk).update(mention_count=F("mention_count") + 1)
            if entity.pk not in entity_ids:
                entity_ids.append(entity.pk)
        ids = sorted(entity_ids)
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                rel, created = Relation.objects.get_or_create(
                    entity_a_id=a, entity_b_id=b, kind="co_occurs",
                    defaults={"learner_id": fact.learner_id, "evidence_fact": fact, "weight": 1.0},
                )
                if not created:
                    Relation.objects.filter(pk=rel.pk).update(weight=F("weight") + 1.0, evidence_fact=fact)
        run = EntityRun.objects.create(fact=fact, kept=len(kept), dropped=dropped)
        if dropped:
            logger.info("memory.entities: dropped %d span(s) outside fact %s", dropped, fact_id)
        _history(fact, change="entities", before=None, after={"mentions": len(kept), "dropped": dropped},
                 service="memory.extract_entities")
    return run


# Background work that leaves a marker row when it ran, so "sent but never ran" can be seen.
def _extracted(ids: list[int]) -> set[int]:
    return set(ExtractionRun.objects.filter(message_id__in=ids).values_list("message_id", flat=True))


def _entities_done(ids: list[int]) -> set[int]:
    return set(EntityRun.objects.filter(fact_id__in=ids).values_list("fact_id", flat=True))


RESENDABLE_TASKS = {"memory.extract_facts": _extracted, "memory.extract_entities": _entities_done}
RESEND_AFTER = timedelta(minutes=15)  # longer than a normal backlog; redelivery is harmless anyway
RESEND_WINDOW = timedelta(hours=6)  # how far back a sweep looks (it runs every 10 minutes)
RESEND_MAX_SENDS = 3  # a task that keeps not running (its target was deleted, parse errors) stops here


def outbox_resend_lost(*, now: datetime | None = None, after: timedelta = RESEND_AFTER,
                       window: timedelta = RESEND_WINDOW, max_sends: int = RESEND_MAX_SENDS) -> dict[str, int]:
    """Send again memory tasks the broker accepted but that never ran.

    The outbox guarantees a task reaches the broker; a broker that keeps its queue only in memory
    (Redis without persistence, as on this project's test machines) can still lose it in a
    restart. Extraction and entity runs leave a marker row, so a sent outbox row older than
    `after` without its marker is lost work: it is published again, at most `max_sends` times in
    all. The tasks are idempotent per id, so a task that was merely slow runs once in effect."""
    now = now or timezone.now()
    out = {"checked": 0, "resent": 0, "gave_up": 0}
    for task_name, done in RESENDABLE_TASKS.items():
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
        logger.warning("memory: re-sent %(resent)s lost tasks, gave up on %(gave_up)s", out)
    return out


def _resend_batch(batch: list[tuple[int, list, int]], done, max_sends: int, out: dict[str, int]) -> bool:
    finished = done([args[0] for _, args, _ in batch if args])
    for pk, args, attempts in batch:
        out["checked"] += 1
        if not args or args[0] in finished:
            continue
        if attempts >= max_sends:
            out["gave_up"] += 1
            continue
        if not outbox_resend(message_id=pk):
            return False  # broker down: the row is pending again and the relay takes it from here
        out["resent"] += 1
    return True
