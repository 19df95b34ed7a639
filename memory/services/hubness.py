"""The exact hubness of a learner's facts (memory/hubness.py), recomputed in one pass.

Ingest gives each new fact its hubness; this pass recomputes it exactly for every live fact with
an embedding (new neighbours of older facts, deleted, superseded and edited ones included) and is
run by the daily consolidation. Hubness is derived ranking data, like the stored tsvector: its
changes write no FactHistory row."""

from __future__ import annotations

from django.db import transaction

from memory.hubness import exact_hubness
from memory.models import Fact
from memory.vectors import unit_rows

CHANGED = 1e-6  # a stored value closer than this to the exact one is left alone (no row rewrite)


def hubness_refresh(*, learner_id: int) -> int:
    """Recompute the hubness of the learner's live facts; returns how many facts changed.
    Superseded facts are not searched by default and are not anyone's neighbour."""
    rows = list(Fact.objects.filter(learner_id=learner_id, superseded_by__isnull=True, embedding__isnull=False)
                .values_list("id", "embedding", "hubness"))
    if not rows:
        return 0
    exact = exact_hubness(unit_rows([vec for _, vec, _ in rows]))
    changed = [Fact(pk=fid, hubness=h) for (fid, _, old), h in zip(rows, exact, strict=True) if abs(h - old) > CHANGED]
    with transaction.atomic():
        Fact.objects.bulk_update(changed, ["hubness"], batch_size=500)
    return len(changed)
