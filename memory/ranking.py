"""How a learner search ranks, in terms that do not depend on anyone's data: two candidate lists
(the vector side, by cosine lowered by hubness; the text side, by BM25) fused by their ranks.

- BM25 (Robertson and Zaragoza, 2009; k1 = 1.2, b = 0.75, the textbook values): a query word's
  weight is its inverse document frequency among the learner's own facts, so a word in half of
  them (a speaker's name, "really", "today") weighs little and a rare one ("linocut") much. The
  term statistics are counted at query time from the learner's rows, so they are exact and need
  no upkeep at ingest. PostgreSQL's `ts_rank_cd` has no such weight: a question sharing only
  common words with a turn ranked it as high as one sharing the rare word the question is about.
- Reciprocal-rank fusion (Cormack, Clarke and Büttcher, 2009; k = 60, their value): a fact's
  score is the sum over the sides of 1 / (k + its rank there). Only ranks are used, so no side's
  score scale (a cosine near 0.3 for every turn, a text score normalised to the best match) can
  swamp the other; nothing to calibrate per data set.

The PostgreSQL statement (memory.selectors) computes the same in SQL; this module is the pure form
used by the embedded (SQLite) path and by tests. Decided on two sets side by side
(bench/bench_memory_longconv.py, memory/README.md "Ranking, fourteenth round")."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

RRF_K = 60
BM25_K1 = 1.2
BM25_B = 0.75
# Candidates taken from each side before fusion (at least; a larger limit takes more): deep
# enough that a fact ranked well by one side and poorly by the other can still be reached.
SIDE_DEPTH = 100


def side_depth(limit: int) -> int:
    return max(SIDE_DEPTH, 4 * limit)


def bm25_scores(docs: Sequence[Sequence[str]], terms: Iterable[str], *, k1: float = BM25_K1,
                b: float = BM25_B) -> list[float]:
    """Okapi BM25 of each document (a list of its words, repeats kept) for a set of query terms,
    with the document frequencies of these documents; 0 for a document with none of the terms."""
    wanted = set(terms)
    counts = [Counter(w for w in doc if w in wanted) for doc in docs]
    lengths = [len(doc) for doc in docs]
    n = len(counts)
    if not n or not wanted:
        return [0.0] * n
    avg = max(sum(lengths) / n, 1.0)
    df: Counter = Counter()
    for c in counts:
        df.update(c.keys())
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    return [sum(idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg)) for t, tf in c.items())
            for c, length in zip(counts, lengths, strict=True)]


def rrf(rank: int | None, *, k: int = RRF_K) -> float:
    """One side's share of a fact's fused score: 1 / (k + rank), rank from 1; 0 when the side did
    not return the fact."""
    return 0.0 if rank is None else 1.0 / (k + rank)


def ranks(order: Sequence[int]) -> dict[int, int]:
    """{item: its rank from 1} for a best-first list."""
    return {item: n for n, item in enumerate(order, start=1)}
