"""Storing facts: validated facts with their embeddings go in set-wise, through the duplicate,
restatement and surprise rules (memory.services.dedup); extraction results are stored once per
message. Every change writes a FactHistory row in the same transaction; follow-up work (entity
extraction, a due summary) goes through the outbox, after commit. No model call here (the
embeddings come with the facts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.outbox.services import outbox_enqueue
from memory import hubness, rules
from memory.models import ExtractionRun, Fact, FactHistory
from memory.services import dedup
from memory.services.history import fact_snapshot, message_conversation_ref, public_refs
from memory.services.summaries import summary_enqueue_if_due
from memory.vectors import unit


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
    hubness: float = 0.0  # memory/hubness.py

    @property
    def pk(self) -> int | None:
        return self.duplicate_of if self.duplicate_of is not None else self.obj.pk


def facts_ingest(*, learner_id: int, facts: Sequence[rules.CleanFact], embeddings: Sequence[Sequence[float]],
                 source_message_id: int | None = None, source_agent: str = "", service: str,
                 extras: Sequence[IngestExtra] | None = None) -> IngestResult:
    """Store validated facts for a learner: exact duplicates dropped, near duplicates strengthen the
    older fact, conflicting near-matches are stored as surprises. Enqueues one entity-extraction task for
    all new facts and a summary when the threshold is reached (outbox, after commit).

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
    units = [unit(e) for e in embeddings]
    todo = [i for i in range(len(facts)) if hashes[i] not in known_hash
            and not (extras[i].external_id and extras[i].external_id in known_ext)]
    db_near = dict(zip(todo, dedup.nearest_facts(learner_id=learner_id, vectors=[units[i] for i in todo]), strict=True))
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
            cands = cands[:dedup.NEIGHBOURS]
        decision = dedup.decide(fact, cands)
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
    _plan_hubness(planned, db_near)
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


def _plan_hubness(planned: list[_Planned], db_near: dict[int, list[tuple[int, str, float]]]) -> None:
    """The hubness of the new facts (memory/hubness.py), from the nearest stored facts the
    duplicate rules fetched and from the other new facts of this call: exact when stored.
    The older facts a new fact comes near are not rewritten here: an UPDATE of a fact row also
    writes its entries in every index of the table, the HNSW index included, and halved the ingest
    rate (memory/README.md, "Hubness"); the daily consolidation recomputes them exactly."""
    if not planned:
        return
    mat = np.vstack([p.unit for p in planned])
    within = mat @ mat.T
    for n, p in enumerate(planned):
        near = [sim for _, _, sim in db_near.get(p.index, [])]
        p.hubness = hubness.hubness_of([*near, *np.delete(within[n], n)])


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
            hubness=p.hubness,
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
    conflict_refs = public_refs(Fact, [p.obj.conflicts_with_id for p in stored if p.conflict])
    for p in stored:
        after = fact_snapshot(p.obj)
        if p.conflict:
            after.update({"conflicts_with": conflict_refs.get(p.obj.conflicts_with_id),
                          "cosine": round(p.conflict[1], 4),
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
    conversation = message_conversation_ref(source_message_id)  # history rows carry public ids only
    for fact_id, fact, sim, rule in ops:
        old = targets[fact_id]
        before = fact_snapshot(old)
        old.confidence = min(1.0, max(old.confidence, fact.confidence) + 0.05)
        old.access_count += 1
        old.last_accessed_at = now
        history.append(FactHistory(fact=old, change="strengthened", before=before,
                                   after={**fact_snapshot(old), "by_content": fact.content, "cosine": round(sim, 4),
                                          "rule": rule, "source_conversation": conversation}, service=service))
    for old in targets.values():
        Fact.objects.filter(pk=old.pk).update(confidence=old.confidence, access_count=old.access_count,
                                              last_accessed_at=now)
    FactHistory.objects.bulk_create(history)


def _enqueue_followups(*, learner_id: int, created: list[int]) -> None:
    """One entity-extraction message for all the facts this call created (the task takes the
    list), not one per fact: a message per fact was an outbox row, an after-commit callback and a
    broker publish each, most of a batch's ingest time. Keyed by the first new fact, which only
    this call created."""
    if not created:
        return
    outbox_enqueue(task_name="memory.extract_entities", args=[list(created)], queue="memory",
                   dedup_key=entities_dedup_key(created))
    summary_enqueue_if_due(learner_id=learner_id)


def entities_dedup_key(created: Sequence[int]) -> str:
    """The outbox key of the entity message for the facts one call created."""
    return f"memory.extract_entities:{created[0]}+{len(created)}"


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
