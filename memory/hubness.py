"""Hubness: how close a fact sits to its nearest neighbours among the learner's other facts.

In a space of sentence embeddings some texts are near almost everything: short, generic turns
("Did you hear about the new park they're building?", "Candles and board games?") sit close to
many questions, while a statement that carries a fact about the person ("My new obsession is
linocut printing") is close to few. Plain cosine ranks such hubs above the facts a question is
about; this is the hubness problem of nearest-neighbour search in high dimensions. The remedy
used here is the local scaling of CSLS (Conneau et al., 2018): a fact's vector score is its cosine
to the query minus a weight times its hubness, the mean cosine to its k nearest other facts
(memory.conf.SEARCH_HUB_K, SEARCH_HUB_WEIGHT).

Where it is computed (code, no model): at ingest, for each new fact, from the nearest facts the
duplicate rules already fetch and the other facts of the same call (exact at that moment); for
every live fact of a learner, exactly, by the daily consolidation
(services.hubness.hubness_refresh). An older fact's hubness is not raised at ingest when a new
fact comes near it (rewriting fact rows halved the ingest rate), so until the next consolidation
it can be lower than exact; on the benchmark that cost 0.007 of recall@10 (README "Hubness").

Decided on the long-conversation benchmark (memory/README.md, "Hubness"). This module is pure:
lists of cosines in, lists out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from memory import conf

# Cosines at or above this are the same text (an exact duplicate is never stored twice for a
# learner, but a resend with other whitespace or case folds to the same embedding): not a neighbour.
SAME_TEXT_COSINE = 0.9999
_BLOCK = 1024  # rows of the learner's similarity matrix computed at once (bounded memory)


def top_cosines(existing: Sequence[float], new: Iterable[float], k: int | None = None) -> list[float]:
    """The k largest of a fact's neighbour cosines after adding `new` ones, largest first."""
    k = conf.SEARCH_HUB_K if k is None else k
    merged = sorted([*existing, *(float(c) for c in new if c < SAME_TEXT_COSINE)], reverse=True)
    return [round(c, 6) for c in merged[:k]]


def hubness_of(cosines: Sequence[float]) -> float:
    """Mean of the neighbour cosines; 0 for a fact with no neighbour yet (a learner's first fact)."""
    return round(float(sum(cosines)) / len(cosines), 6) if cosines else 0.0


def exact_neighbour_cosines(unit_rows: np.ndarray, k: int | None = None) -> list[list[float]]:
    """For each row of a matrix of unit vectors, its k largest cosines to the other rows."""
    k = conf.SEARCH_HUB_K if k is None else k
    n = unit_rows.shape[0]
    out: list[list[float]] = []
    for start in range(0, n, _BLOCK):
        sims = unit_rows[start:start + _BLOCK] @ unit_rows.T
        sims[np.arange(sims.shape[0]), np.arange(start, start + sims.shape[0])] = -np.inf
        sims[sims >= SAME_TEXT_COSINE] = -np.inf
        take = min(k, max(0, n - 1))
        if take == 0:
            out.extend([] for _ in range(sims.shape[0]))
            continue
        part = -np.partition(-sims, take - 1, axis=1)[:, :take]
        for row in part:
            out.append(top_cosines([], [c for c in row if np.isfinite(c)], k))
    return out
