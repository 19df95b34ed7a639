"""The exact hubness of a learner's facts (memory/hubness.py), recomputed in one pass.

Ingest gives each new fact its hubness; this pass recomputes it exactly for every live fact with
an embedding (new neighbours of older facts, deleted, superseded and edited ones included) and is
run by the daily consolidation. Hubness is derived ranking data, like
the stored tsvector: its changes write no FactHistory row."""

from __future__ import annotations

import numpy as np
from django.db import transaction

from memory.hubness import exact_neighbour_cosines, hubness_of
from memory.models import Fact
from memory.vectors import as_array


def hubness_refresh(*, learner_id: int) -> int:
    """Recompute the neighbour cosines and hubness of the learner's live facts; returns how many
    facts changed. Superseded facts are not searched by default and are not anyone's neighbour."""
    rows = list(Fact.objects.filter(learner_id=learner_id, superseded_by__isnull=True, embedding__isnull=False)
                .values_list("id", "embedding", "neighbour_cosines"))
    if not rows:
        return 0
    mat = np.vstack([as_array(r[1]) for r in rows])
    mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-9)
    changed = [Fact(pk=fid, neighbour_cosines=cosines, hubness=hubness_of(cosines))
               for (fid, _, old), cosines in zip(rows, exact_neighbour_cosines(mat), strict=True) if cosines != old]
    with transaction.atomic():
        Fact.objects.bulk_update(changed, ["neighbour_cosines", "hubness"], batch_size=500)
    return len(changed)
