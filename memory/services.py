"""Memory writes. Every change to a fact writes a FactHistory row in the same transaction.
Keyword-only, typed, atomic. No model calls here except the embedding in `facts_ingest_text`-style
helpers that the API uses (embedding is allowed on the request path; chat models are not)."""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from core.outbox.models import OutboxMessage
from core.outbox.services import outbox_enqueue, outbox_resend
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
class IngestItem:
    """What happened to one submitted item. `fact_id` is the stored fact that now holds it: the new
    fact (created, surprise) or the older one (strengthened, duplicate)."""

    index: int
    outcome: str  # created | surprise | strengthened | duplicate
    fact_id: int | None
    rule: str = ""  # duplicate: exact_duplicate / external_id; strengthened: near_duplicate / restates;
    #                 surprise: the conflict rule
    cosine: float | None = None
    conflicts_with: int | None = None
    external_id: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "outcome": self.outcome, "fact_id": self.fact_id}
        if self.rule:
            out["rule"] = self.rule
        if self.cosine is not None:
            out["cosine"] = round(self.cosine, 4)
        if self.conflicts_with is not None:
            out["conflicts_with"] = self.conflicts_with
        if self.external_id:
            out["external_id"] = self.external_id
        return out


@dataclass
class IngestResult:
    created: list[int] = field(default_factory=list)
    strengthened: list[int] = field(default_factory=list)
    surprises: list[int] = field(default_factory=list)
    duplicates: int = 0
    items: list[IngestItem] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"created": self.created, "strengthened": self.strengthened, "surprises": self.surprises,
                "duplicates": self.duplicates}


@dataclass(frozen=True)
class IngestExtra:
    """Optional per-item data a client sends along (batch endpoint): when it was said, the client's
    own id for it, and free metadata. Stored on the fact, returned on every search hit."""

    occurred_at: datetime | None = None
    external_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


NEIGHBOURS = 5  # candidates per new fact that the rules look at, most similar first


def _neighbours(*, learner_id: int, vectors: list[np.ndarray]) -> list[list[tuple[int, str, float]]]:
    """For each vector, the NEIGHBOURS most similar live (not superseded) facts of the learner,
    exact, as (fact id, content, cosine). One round trip on PostgreSQL (a LATERAL scan per vector)."""
    if not vectors:
        return []
    if settings.DB_VENDOR == "postgresql":
        from django.db import connection

        literals = ["[" + ",".join(f"{x:.7g}" for x in v) + "]" for v in vectors]
        with connection.cursor() as cur:
            cur.execute(
                "SELECT q.i, n.id, n.content, n.sim FROM unnest(%s::int[], %s::vector[]) AS q(i, v) "
                "CROSS JOIN LATERAL (SELECT f.id, f.content, 1 - (f.embedding <=> q.v) AS sim FROM memory_fact f "
                "WHERE f.learner_id = %s AND f.superseded_by_id IS NULL AND f.embedding IS NOT NULL "
                "ORDER BY f.embedding <=> q.v LIMIT %s) n ORDER BY q.i, n.sim DESC",
                [list(range(len(vectors))), literals, learner_id, NEIGHBOURS])
            out: list[list[tuple[int, str, float]]] = [[] for _ in vectors]
            for i, fid, content, sim in cur.fetchall():
                out[i].append((fid, content, float(sim)))
            return out
    rows = list(Fact.objects.filter(learner_id=learner_id, superseded_by__isnull=True, embedding__isnull=False)
                .values_list("id", "content", "embedding"))
    if not rows:
        return [[] for _ in vectors]
    mat = np.vstack([_as_array(r[2]) for r in rows])
    mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-9)
    sims = np.vstack(vectors) @ mat.T
    return [[(rows[j][0], rows[j][1], float(row[j])) for j in np.argsort(-row)[:NEIGHBOURS]] for row in sims]


def _unit(vec: Sequence[float]) -> np.ndarray:
    arr = np.asarray(vec, dtype=np.float32)
    return arr / max(float(np.linalg.norm(arr)), 1e-9)


@dataclass
class _Planned:
    """A fact this batch will create (its id is known after the insert)."""

    index: int
    fact: rules.CleanFact
    embedding: list[float]
    unit: np.ndarray
    hash: str
    extra: IngestExtra
    conflict: tuple[Any, float, str] | None = None  # (target, cosine, rule)
    obj: Fact | None = None
    duplicate_of: int | None = None  # a concurrent writer stored the same text first

    @property
    def pk(self) -> int | None:
        return self.duplicate_of if self.duplicate_of is not None else self.obj.pk


def _decide(fact: rules.CleanFact, candidates: list[tuple[Any, str, float]]) -> tuple[str, Any, float, str] | None:
    """The dedup / restatement / surprise rules for one new fact against its most similar facts
    (target, content, cosine), most similar first. Returns (action, target, cosine, rule) with
    action "strengthen" or "surprise", or None (store it as a new fact). A merge needs, besides the
    similarity, that the new text says nothing the older one lacks (rules.distinct_reason: another
    speaker, a new number, a new name), so no distinct statement is folded away unsearchable."""
    if not candidates:
        return None
    best, best_content, best_sim = candidates[0]
    if (best_sim >= conf.dedup_cosine() and rules.conflict_reason(best_content, fact.content) is None
            and rules.distinct_reason(best_content, fact.content) is None):
        return "strengthen", best, best_sim, "near_duplicate"
    # Below the near-duplicate line, the most similar candidates decide (code rules, in order of
    # similarity): a conflict makes a surprise; a restatement strengthens the older fact.
    for target, content, sim in candidates:
        if sim < conf.surprise_cosine():
            break
        if rules.distinct_reason(content, fact.content) == "other_speaker":
            continue  # what one person says neither restates nor contradicts what another said
        reason = rules.surprise_reason(content, fact.content)
        if reason:
            return "surprise", target, sim, reason
        if rules.restates(content, fact.content) and rules.distinct_reason(content, fact.content) is None:
            return "strengthen", target, sim, "restates"
    return None


def facts_ingest(*, learner_id: int, facts: Sequence[rules.CleanFact], embeddings: Sequence[Sequence[float]],
                 source_message_id: int | None = None, source_agent: str = "", service: str,
                 extras: Sequence[IngestExtra] | None = None) -> IngestResult:
    """Store validated facts for a learner: exact duplicates dropped, near duplicates strengthen the
    older fact, conflicting near-matches are stored as surprises. Enqueues entity extraction for new
    facts and a summary when the threshold is reached (outbox, after commit).

    Set-wise: one query for exact duplicates, one for every item's nearest facts, one bulk insert;
    items are still decided in order, so an item is compared with the learner's facts and with the
    items before it in the same call (exactly as if they were sent one by one)."""
    if len(facts) != len(embeddings):
        raise ValueError("one embedding per fact")
    extras = list(extras) if extras is not None else [IngestExtra() for _ in facts]
    if len(extras) != len(facts):
        raise ValueError("one extra per fact")
    now = timezone.now()
    result = IngestResult()
    with transaction.atomic():
        _ingest_set(learner_id=learner_id, facts=list(facts), embeddings=[list(e) for e in embeddings],
                    extras=extras, source_message_id=source_message_id, source_agent=source_agent,
                    service=service, now=now, result=result)
        _enqueue_followups(learner_id=learner_id, created=result.created)
    return result


def _ingest_set(*, learner_id: int, facts: list[rules.CleanFact], embeddings: list[list[float]],
                extras: list[IngestExtra], source_message_id: int | None, source_agent: str, service: str,
                now: datetime, result: IngestResult) -> None:
    hashes = [rules.content_hash(f.content) for f in facts]
    known_hash = dict(Fact.objects.filter(learner_id=learner_id, content_hash__in=set(hashes))
                      .values_list("content_hash", "id"))
    ext_ids = {x.external_id for x in extras if x.external_id}
    known_ext = (dict(Fact.objects.filter(learner_id=learner_id, external_id__in=ext_ids)
                      .values_list("external_id", "id")) if ext_ids else {})
    units = [_unit(e) for e in embeddings]
    todo = [i for i in range(len(facts)) if hashes[i] not in known_hash
            and not (extras[i].external_id and extras[i].external_id in known_ext)]
    db_near = dict(zip(todo, _neighbours(learner_id=learner_id, vectors=[units[i] for i in todo]), strict=True))
    planned: list[_Planned] = []
    batch_hash: dict[str, _Planned] = {}
    batch_ext: dict[str, _Planned] = {}
    decisions: list[tuple[int, str, Any, float | None, str]] = []  # (index, outcome, target, cosine, rule)
    for i, fact in enumerate(facts):
        ext = extras[i].external_id
        if hashes[i] in known_hash or hashes[i] in batch_hash:
            decisions.append((i, "duplicate", known_hash.get(hashes[i]) or batch_hash[hashes[i]], None,
                              "exact_duplicate"))
            continue
        if ext and (ext in known_ext or ext in batch_ext):
            decisions.append((i, "duplicate", known_ext.get(ext) or batch_ext[ext], None, "external_id"))
            continue
        cands: list[tuple[Any, str, float]] = list(db_near[i])
        if planned:
            sims = np.vstack([p.unit for p in planned]) @ units[i]
            cands += [(p, p.fact.content, float(sim)) for p, sim in zip(planned, sims, strict=True)]
            cands.sort(key=lambda c: -c[2])
            cands = cands[:NEIGHBOURS]
        decision = _decide(fact, cands)
        if decision is not None and decision[0] == "strengthen":
            _, target, sim, rule = decision
            decisions.append((i, "strengthened", target, sim, rule))
            continue
        p = _Planned(index=i, fact=fact, embedding=embeddings[i], unit=units[i], hash=hashes[i], extra=extras[i])
        if decision is not None:
            p.conflict = (decision[1], decision[2], decision[3])
        planned.append(p)
        batch_hash[p.hash] = p
        if ext:
            batch_ext[ext] = p
        decisions.append((i, "surprise" if p.conflict else "created", p, p.conflict[1] if p.conflict else None,
                          p.conflict[2] if p.conflict else ""))
    _insert_planned(planned, learner_id=learner_id, source_message_id=source_message_id, source_agent=source_agent,
                    now=now, service=service)
    fid = lambda t: t.pk if isinstance(t, _Planned) else t  # noqa: E731 - a planned fact or a fact id
    _apply_strengthening([(fid(t), facts[i], sim, rule) for i, kind, t, sim, rule in decisions
                          if kind == "strengthened"], now=now, source_message_id=source_message_id, service=service)
    for i, kind, target, sim, rule in decisions:
        if kind in ("created", "surprise") and target.duplicate_of is not None:
            kind, rule, sim = "duplicate", "exact_duplicate", None
        item = IngestItem(index=i, outcome=kind, fact_id=fid(target), rule=rule, cosine=sim,
                          external_id=extras[i].external_id)
        if kind == "duplicate":
            result.duplicates += 1
        elif kind == "strengthened":
            result.strengthened.append(item.fact_id)
        else:
            result.created.append(item.fact_id)
            if kind == "surprise":
                item.conflicts_with = fid(target.conflict[0])
                result.surprises.append(item.fact_id)
        result.items.append(item)


def _insert_planned(planned: list[_Planned], *, learner_id: int, source_message_id: int | None, source_agent: str,
                    now: datetime, service: str) -> None:
    """One bulk insert for the new facts (conflict targets inside the batch are inserted first, as
    they come earlier), then their history rows."""
    for p in planned:
        target = p.conflict[0] if p.conflict else None
        p.obj = Fact(
            learner_id=learner_id, fact_type=p.fact.fact_type, content=p.fact.content, confidence=p.fact.confidence,
            source_message_id=source_message_id, source_agent=source_agent[:40], embedding=p.embedding,
            content_hash=p.hash, last_accessed_at=now, tier="hot", surprise=p.conflict is not None,
            conflicts_with_id=target if isinstance(target, int) else None,
            surprise_reason=p.conflict[2] if p.conflict else "",
            occurred_at=p.extra.occurred_at, external_id=p.extra.external_id[:200], metadata=p.extra.metadata or {},
        )
    if not planned:
        return
    try:
        with transaction.atomic():
            Fact.objects.bulk_create([p.obj for p in planned])
    except IntegrityError:  # a concurrent writer stored one of these texts first: go one by one
        for p in planned:
            try:
                with transaction.atomic():
                    p.obj.save(force_insert=True)
            except IntegrityError:
                p.duplicate_of = (Fact.objects.filter(learner_id=learner_id, content_hash=p.hash)
                                  .values_list("id", flat=True).first())
    stored = [p for p in planned if p.duplicate_of is None]
    in_batch = [p for p in stored if p.conflict and isinstance(p.conflict[0], _Planned)]
    for p in in_batch:
        p.obj.conflicts_with_id = p.conflict[0].pk
    if in_batch:
        Fact.objects.bulk_update([p.obj for p in in_batch], ["conflicts_with"])
    rows = []
    for p in stored:
        after = _snapshot(p.obj)
        if p.conflict:
            after.update({"conflicts_with": p.obj.conflicts_with_id, "cosine": round(p.conflict[1], 4),
                          "rule": p.conflict[2]})
        if p.extra.external_id:
            after["external_id"] = p.extra.external_id
        rows.append(FactHistory(fact=p.obj, change="surprise" if p.conflict else "created", before=None,
                                after=after, service=service))
    FactHistory.objects.bulk_create(rows)


def _apply_strengthening(ops: list[tuple[int, rules.CleanFact, float, str]], *, now: datetime,
                         source_message_id: int | None, service: str) -> None:
    """Strengthen, never replace: the older wording stays; confidence and recency go up, once per
    strengthening item, in order (one UPDATE per strengthened fact, one history row per item)."""
    if not ops:
        return
    targets = {f.pk: f for f in Fact.objects.select_for_update().filter(pk__in={op[0] for op in ops})
               .defer("embedding")}
    history = []
    for fact_id, fact, sim, rule in ops:
        old = targets[fact_id]
        before = _snapshot(old)
        old.confidence = min(1.0, max(old.confidence, fact.confidence) + 0.05)
        old.access_count += 1
        old.last_accessed_at = now
        history.append(FactHistory(fact=old, change="strengthened", before=before,
                                   after={**_snapshot(old), "by_content": fact.content, "cosine": round(sim, 4),
                                          "rule": rule, "source_message": source_message_id}, service=service))
    for old in targets.values():
        Fact.objects.filter(pk=old.pk).update(confidence=old.confidence, access_count=old.access_count,
                                              last_accessed_at=now)
    FactHistory.objects.bulk_create(history)


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


# Access marks from searches are written behind: a search only records (fact id, time) in this
# process's buffer and a daemon thread writes the buffer every BLOOM_MEMORY_ACCESS_FLUSH_SECONDS in
# one UPDATE, off the request path (the UPDATE inside every read cost ~12 ms). Decay semantics are
# kept: last_accessed_at becomes the time of the (latest) read, not of the write, never moves
# backwards, and access_count grows by the number of reads. A mark can be lost only if the process
# dies within that interval (at most a few seconds of recency for the facts read); atexit flushes.
_access_lock = threading.Lock()
_access_pending: dict[int, list] = {}  # fact id -> [reads, latest read time]
_access_thread: threading.Thread | None = None
_access_since = 0.0  # monotonic time of the oldest buffered mark


def facts_mark_accessed_later(*, fact_ids: Sequence[int], at: datetime | None = None) -> None:
    """Record reads for the write-behind flush (synchronous when the flush interval is 0)."""
    global _access_thread, _access_since
    at = at or timezone.now()
    if conf.access_flush_seconds() <= 0:
        _write_access({fid: [1, at] for fid in fact_ids})
        return
    with _access_lock:
        if not _access_pending:
            _access_since = time.monotonic()
        for fid in fact_ids:
            entry = _access_pending.setdefault(fid, [0, at])
            entry[0] += 1
            entry[1] = max(entry[1], at)
        if _access_thread is None or not _access_thread.is_alive():
            _access_thread = threading.Thread(target=_access_flusher, name="memory-access-flush", daemon=True)
            _access_thread.start()


def facts_access_flush() -> int:
    """Write the buffered access marks now (one UPDATE). Returns the number of facts updated."""
    with _access_lock:
        pending = dict(_access_pending)
        _access_pending.clear()
    return _write_access(pending) if pending else 0


def _write_access(pending: dict[int, list]) -> int:
    if not pending:
        return 0
    if settings.DB_VENDOR != "postgresql":
        updated = 0
        for fid, (n, at) in pending.items():
            updated += Fact.objects.filter(pk=fid).update(access_count=F("access_count") + n,
                                                          last_accessed_at=Greatest("last_accessed_at", Value(at)))
        return updated
    from django.db import connection

    ids, counts, times = zip(*((fid, n, at) for fid, (n, at) in pending.items()), strict=True)
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE memory_fact f SET access_count = f.access_count + v.n, "
            "last_accessed_at = GREATEST(f.last_accessed_at, v.at) "
            "FROM unnest(%s::bigint[], %s::int[], %s::timestamptz[]) AS v(id, n, at) WHERE f.id = v.id",
            [list(ids), list(counts), list(times)])
        return cur.rowcount


def _access_flusher() -> None:
    """Ticks briefly (so a changed interval takes effect at once) and flushes when the oldest
    buffered mark is `interval` old; exits when nothing is pending (the next read restarts it)."""
    from django.db import connection

    while True:
        interval = conf.access_flush_seconds()
        time.sleep(min(0.25, max(0.02, interval)))
        with _access_lock:
            if not _access_pending:
                return
            due = time.monotonic() - _access_since >= interval
        if not due:
            continue
        try:
            facts_access_flush()
        except Exception:  # a failed flush must not kill the thread; the marks of that round are lost
            logger.exception("memory: access-mark flush failed")
        finally:
            connection.close()  # no idle connection held between rounds


atexit.register(lambda: _access_pending and facts_access_flush())


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
