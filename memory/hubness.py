"""Hubness: how close a fact sits to its nearest neighbours among the learner's other facts.

In a space of sentence embeddings some texts are near almost everything: short, generic turns
("Did you hear about the new park they're building?", "Candles and board games?") sit close to
many questions, while a statement that carries a fact about the person ("My new obsession is
linocut printing") is close to few. Plain cosine ranks such hubs above the facts a question is
about; this is the hubness problem of nearest-neighbour search in high dimensions. The remedy
used here is the local scaling of CSLS (Conneau et al., 2018): a fact's vector score is its cosine
to the query minus a weight times its hubness, the mean cosine to its k nearest other facts
(memory.conf.SEARCH_HUB_K, SEARCH_HUB_WEIGHT). The learner's search no longer uses it (a prior on
length does better on both long-conversation sets: memory/README.md "Ranking, eighteenth round");
the global (staff) search does (GLOBAL_HUB_WEIGHT).

Where it is computed (code, no model): at ingest, for each new fact, from the nearest facts the
duplicate rules already fetch and the other facts of the same call (exact at that moment); for
every live fact of a learner, exactly, by the daily consolidation
(services.hubness.hubness_refresh). An older fact's hubness is not raised at ingest when a new
fact comes near it (rewriting fact rows halved the ingest rate), so until the next consolidation
it can be lower than exact; on the benchmark that cost 0.007 of recall@10 (README "Hubness").

Decided on the long-conversation benchmark (memory/README.md, "Hubness"). This module is pure:
cosines or unit vectors in, hubness out."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from memory import conf

# Cosines at or above this are the same text (an exact duplicate is never stored twice for a
# learner, but a resend with other whitespace or case folds to the same embedding): not a neighbour.
SAME_TEXT_COSINE = 0.9999
_BLOCK = 1024  # rows of the learner's similarity matrix computed at once (bounded memory)


def hubness_of(cosines: Iterable[float], k: int | None = None) -> float:
    """Mean of the k largest of a fact's cosines to other facts (the same text is no neighbour);
    0 for a fact with no neighbour yet (a learner's first fact)."""
    k = conf.SEARCH_HUB_K if k is None else k
    top = sorted((float(c) for c in cosines if c < SAME_TEXT_COSINE), reverse=True)[:k]
    return round(sum(top) / len(top), 6) if top else 0.0


def exact_hubness(unit_rows: np.ndarray, k: int | None = None) -> list[float]:
    """The hubness of each row of a matrix of unit vectors (a learner's live facts) among the others."""
    k = conf.SEARCH_HUB_K if k is None else k
    n = unit_rows.shape[0]
    take = min(k, n - 1)
    if take <= 0:
        return [0.0] * n
    out: list[float] = []
    for start in range(0, n, _BLOCK):
        sims = unit_rows[start:start + _BLOCK] @ unit_rows.T
        sims[np.arange(sims.shape[0]), np.arange(start, start + sims.shape[0])] = -np.inf  # not itself
        sims[sims >= SAME_TEXT_COSINE] = -np.inf  # before the cut, so k real neighbours are kept
        top = -np.partition(-sims, take - 1, axis=1)[:, :take]
        out.extend(hubness_of(row[np.isfinite(row)], k) for row in top)
    return out
