"""Consolidation (offline, daily): near duplicates that slipped in are merged."""

from __future__ import annotations

from django.db import transaction

from memory import comparison, conf
from memory.models import Fact
from memory.services.history import fact_snapshot, history_write
from memory.vectors import unit_rows


def facts_consolidate(*, learner_id: int) -> dict[str, int]:
    """Merge near-duplicates that slipped in (e.g. concurrent extraction): the newer fact is marked
    superseded by the older (never deleted), the older is strengthened. Surprises are left for review."""
    facts = list(Fact.objects.filter(learner_id=learner_id, superseded_by__isnull=True, surprise=False,
                                     embedding__isnull=False).order_by("created_at", "id"))
    merged = 0
    if len(facts) < 2:
        return {"merged": 0}
    mat = unit_rows([f.embedding for f in facts])
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
                if comparison.conflict_reason(older.content, newer.content):
                    continue
                before = fact_snapshot(newer)
                Fact.objects.filter(pk=newer.pk).update(superseded_by=older, archived=True)
                newer.superseded_by, newer.archived = older, True
                history_write(newer, change="superseded", before=before, after=fact_snapshot(newer),
                         service="memory.consolidate")
                ob = fact_snapshot(older)
                older.confidence = min(1.0, max(older.confidence, newer.confidence) + 0.05)
                older.access_count += newer.access_count
                Fact.objects.filter(pk=older.pk).update(confidence=older.confidence, access_count=older.access_count)
                history_write(older, change="merged", before=ob,
                              after={**fact_snapshot(older), "merged": str(newer.public_id)},
                              service="memory.consolidate")
                gone.add(j)
                merged += 1
    return {"merged": merged}
