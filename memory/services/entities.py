"""The entity graph: validated mentions of a fact, canonical entities per learner, and
co-occurrence relations between the entities one fact names.

Written set-wise: the facts of one entity task (a whole ingest batch) go in one transaction with a
fixed number of statements, whatever their number, and the result is what recording them one by
one in the given order would give (same entities, mention counts, relation weights and evidence)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Case, F, FloatField, IntegerField, Value, When
from django.utils import timezone

from memory import rules
from memory.models import Entity, EntityRun, Fact, FactHistory, Mention, Relation

logger = logging.getLogger(__name__)
SERVICE = "memory.extract_entities"


@dataclass(frozen=True)
class FactSpans:
    """What the entity model found in one fact: its spans and how many it dropped already."""

    fact_id: int
    spans: Sequence[rules.Span]
    dropped: int = 0


def entities_record(*, fact_id: int, spans: Sequence[rules.Span], dropped: int) -> EntityRun | None:
    """`entities_record_many` for one fact: its EntityRun, or None if the fact is gone or done."""
    return entities_record_many(found=[FactSpans(fact_id, spans, dropped)]).get(fact_id)


def entities_record_many(*, found: Sequence[FactSpans]) -> dict[int, EntityRun]:
    """Store validated mentions of these facts, canonicalised per learner, and co-occurrence
    relations, in one transaction. Idempotent per fact (EntityRun marker): a fact that is gone or
    already has its run is skipped, so a re-delivered task writes nothing twice. Spans must already
    be validated against the fact text; they are re-checked here so the invariant holds whatever
    the caller did. Returns the new runs by fact id."""
    with transaction.atomic():
        # Locked in id order, like every multi-fact writer here, so two writers cannot deadlock.
        facts = {f.pk: f for f in Fact.objects.select_for_update().filter(pk__in={x.fact_id for x in found})
                 .order_by("pk").only("id", "learner_id", "content")}
        done = set(EntityRun.objects.filter(fact_id__in=facts).values_list("fact_id", flat=True))
        plans: list[tuple[Fact, list[rules.Span], int]] = []
        for item in found:
            fact = facts.get(item.fact_id)
            if fact is None or fact.pk in done:
                continue
            done.add(fact.pk)
            kept, extra = rules.validate_spans(fact.content, list(item.spans))
            plans.append((fact, kept, item.dropped + extra))
        if not plans:
            return {}
        entity_of = _entities_ensure(plans)
        _mentions_add(plans, entity_of)
        _relations_add(plans, entity_of)
        runs = EntityRun.objects.bulk_create([EntityRun(fact=fact, kept=len(kept), dropped=dropped)
                                              for fact, kept, dropped in plans])
        FactHistory.objects.bulk_create([
            FactHistory(fact=fact, change="entities", before=None, after={"mentions": len(kept), "dropped": dropped},
                        service=SERVICE) for fact, kept, dropped in plans])
    dropped_total = sum(d for _, _, d in plans)
    if dropped_total:
        logger.info("memory.entities: dropped %d span(s) outside their facts (%d facts)", dropped_total, len(plans))
    return {run.fact_id: run for run in runs}


def _key(fact: Fact, span: rules.Span) -> tuple[int, str, str]:
    return fact.learner_id, rules.canonical_entity(span.text)[:200], span.label


def _entities_ensure(plans: list[tuple[Fact, list[rules.Span], int]]) -> dict[tuple[int, str, str], int]:
    """Every (learner, canonical name, label) the spans name, created if new (display name: the
    first surface form, in order), mapped to its entity id. Inserted with ON CONFLICT DO NOTHING,
    then read back, so a concurrent writer creating the same entity is not an error."""
    display: dict[tuple[int, str, str], str] = {}
    for fact, kept, _ in plans:
        for sp in kept:
            display.setdefault(_key(fact, sp), sp.text[:200])
    if not display:
        return {}

    def existing() -> dict[tuple[int, str, str], int]:
        rows = (Entity.objects.filter(learner_id__in={k[0] for k in display},
                                      canonical_name__in={k[1] for k in display})
                .values_list("learner_id", "canonical_name", "label", "pk"))
        return {(lid, name, label): pk for lid, name, label, pk in rows if (lid, name, label) in display}

    have = existing()
    missing = [k for k in display if k not in have]  # in the order the facts name them, as one by one
    if missing:
        Entity.objects.bulk_create([Entity(learner_id=k[0], canonical_name=k[1], label=k[2], display_name=display[k])
                                    for k in missing], ignore_conflicts=True)
        have = existing()
    return have


def _mentions_add(plans: list[tuple[Fact, list[rules.Span], int]], entity_of: dict[tuple[int, str, str], int]) -> None:
    """New mentions (a span already stored for that fact and entity is not stored twice) and each
    entity's mention count raised by the mentions added, in one UPDATE."""
    stored = set(Mention.objects.filter(fact_id__in=[f.pk for f, _, _ in plans])
                 .values_list("fact_id", "start", "end", "entity_id"))
    new: list[Mention] = []
    for fact, kept, _ in plans:
        for sp in kept:
            key = (fact.pk, sp.start, sp.end, entity_of[_key(fact, sp)])
            if key in stored:
                continue
            stored.add(key)
            new.append(Mention(entity_id=key[3], fact_id=fact.pk, start=sp.start, end=sp.end, text=sp.text,
                               score=sp.score))
    if not new:
        return
    Mention.objects.bulk_create(new)
    added = Counter(m.entity_id for m in new)
    Entity.objects.filter(pk__in=added).update(mention_count=F("mention_count") + Case(
        *[When(pk=pk, then=Value(n)) for pk, n in added.items()], default=Value(0), output_field=IntegerField()))


def _relations_add(plans: list[tuple[Fact, list[rules.Span], int]], entity_of: dict[tuple[int, str, str], int]) -> None:
    """One co-occurrence per pair of entities a fact names: a missing pair is inserted with weight
    0 (ON CONFLICT DO NOTHING), then every pair gains the number of facts naming it, and its
    evidence becomes the last of them, in one UPDATE."""
    weight: Counter = Counter()
    evidence: dict[tuple[int, int], int] = {}
    learner: dict[tuple[int, int], int] = {}
    for fact, kept, _ in plans:
        ids = sorted({entity_of[_key(fact, sp)] for sp in kept})
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                weight[(a, b)] += 1
                evidence[(a, b)] = fact.pk
                learner.setdefault((a, b), fact.learner_id)
    if not weight:
        return
    pairs = sorted(weight)
    Relation.objects.bulk_create([Relation(learner_id=learner[p], entity_a_id=p[0], entity_b_id=p[1], kind="co_occurs",
                                           evidence_fact_id=evidence[p], weight=0.0) for p in pairs],
                                 ignore_conflicts=True)
    rows = (Relation.objects.filter(kind="co_occurs", entity_a_id__in={p[0] for p in pairs},
                                    entity_b_id__in={p[1] for p in pairs})
            .values_list("entity_a_id", "entity_b_id", "pk"))
    pk_of = {(a, b): pk for a, b, pk in rows if (a, b) in weight}
    Relation.objects.filter(pk__in=pk_of.values()).update(
        weight=F("weight") + Case(*[When(pk=pk_of[p], then=Value(float(weight[p]))) for p in pairs],
                                  default=Value(0.0), output_field=FloatField()),
        evidence_fact_id=Case(*[When(pk=pk_of[p], then=Value(evidence[p])) for p in pairs],
                              output_field=IntegerField()),
        updated_at=timezone.now())

