"""Which stored facts a new fact is compared with, and what the comparison decides: strengthen
an older fact (near duplicate, restatement), flag a surprise (a conflict), or store it as new.
The thresholds are settings (memory.conf); the text rules are memory.comparison."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings

from memory import comparison, conf, rules
from memory.models import Fact
from memory.vectors import unit_rows

# Candidates per new fact that the rules look at, most similar first; also where a new fact's
# hubness comes from (services.ingest), so at least conf.SEARCH_HUB_K (a test checks).
NEIGHBOURS = 5


def nearest_facts(*, learner_id: int, vectors: list[np.ndarray]) -> list[list[tuple[int, str, float]]]:
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
    mat = unit_rows([r[2] for r in rows])
    sims = np.vstack(vectors) @ mat.T
    return [[(rows[j][0], rows[j][1], float(row[j])) for j in np.argsort(-row)[:NEIGHBOURS]] for row in sims]


def decide(fact: rules.CleanFact, candidates: list[tuple[Any, str, float]]) -> tuple[str, Any, float, str] | None:
    """The dedup / restatement / surprise rules for one new fact against its most similar facts
    (target, content, cosine), most similar first. Returns (action, target, cosine, rule) with
    action "strengthen" or "surprise", or None (store it as a new fact). A merge needs, besides the
    similarity, that the new text says nothing the older one lacks (comparison.distinct_reason: another
    speaker, a new number, a new name), so no distinct statement is folded away unsearchable."""
    if not candidates:
        return None
    best, best_content, best_sim = candidates[0]
    if (best_sim >= conf.dedup_cosine() and comparison.conflict_reason(best_content, fact.content) is None
            and comparison.distinct_reason(best_content, fact.content) is None):
        return "strengthen", best, best_sim, "near_duplicate"
    # Below the near-duplicate line, the most similar candidates decide (code rules, in order of
    # similarity): a conflict makes a surprise; a restatement strengthens the older fact.
    for target, content, sim in candidates:
        if sim < conf.surprise_cosine():
            break
        if comparison.distinct_reason(content, fact.content) == "other_speaker":
            continue  # what one person says neither restates nor contradicts what another said
        reason = comparison.surprise_reason(content, fact.content)
        if reason:
            return "surprise", target, sim, reason
        # A conflict the surprise rule does not flag (memory.comparison.negated_claim) is still
        # never merged: the newer statement is stored beside the older one.
        if (comparison.restates(content, fact.content) and comparison.distinct_reason(content, fact.content) is None
                and comparison.conflict_reason(content, fact.content) is None):
            return "strengthen", target, sim, "restates"
    return None
