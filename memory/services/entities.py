"""The entity graph: validated mentions of a fact, canonical entities per learner, and
co-occurrence relations between the entities one fact names."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import transaction
from django.db.models import F

from memory import rules
from memory.models import Entity, EntityRun, Fact, Mention, Relation
from memory.services.history import history_write

logger = logging.getLogger(__name__)


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
        history_write(fact, change="entities", before=None, after={"mentions": len(kept), "dropped": dropped},
                 service="memory.extract_entities")
    return run
