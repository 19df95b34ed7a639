"""How a learner search ranks, in terms that do not depend on anyone's data: two candidate lists
(the vector side, by cosine lowered by hubness; the text side, by BM25), their union scored by a
mix of the two on fixed scales.

- BM25 (Robertson and Zaragoza, 2009; k1 = 1.2, b = 0.75, the textbook values): a query word's
  weight is its inverse document frequency among the learner's own facts, so a word in half of
  them (a speaker's name, "really", "today") weighs little and a rare one ("linocut") much. The
  term statistics are counted at query time from the learner's rows, so they are exact and need
  no upkeep at ingest. PostgreSQL's `ts_rank_cd` has no such weight: a question sharing only
  common words with a turn ranked it as high as one sharing the rare word the question is about.
- A mix on fixed scales (per learner, conf.SEARCH_FUSION "mix"): 1 + the vector score (a cosine,
  lowered by hubness) + a weight × the text score as a share of the query's ceiling, the most its
  words could score among the learner's facts (`bm25_ceiling`). The share is 1 for a fact holding
  every rare word of the query, near 0 for one sharing only a name: its scale is set by the
  definition, not by the scores a data set happens to produce (a text score normalised to the
  best match had made every weak match look like a full one).
- A prior on length (`length_prior`): among facts a query is about as near to, the one that says
  more. It replaced hubness in the learner's search (memory/README.md, "Ranking, eighteenth round").
- Reciprocal-rank fusion (Cormack, Clarke and Büttcher, 2009; k = 60, their value), for global
  search: a fact's score is the sum over the sides of weight / (k + its rank there).

The PostgreSQL statement (memory.selectors) computes the same in SQL; this module is the pure form
used by the embedded (SQLite) path and by tests. Decided on two sets side by side
(bench/bench_memory_longconv.py, memory/README.md "Ranking, seventeenth round")."""

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


def bm25_idf(docs: Sequence[Sequence[str]], terms: Iterable[str]) -> dict[str, float]:
    """Each query term's inverse document frequency among these documents (a list of words each),
    for the terms at least one of them holds."""
    wanted = set(terms)
    n = len(docs)
    df: Counter = Counter()
    for doc in docs:
        df.update(wanted.intersection(doc))
    return {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}


def bm25_scores(docs: Sequence[Sequence[str]], terms: Iterable[str], *, k1: float = BM25_K1,
                b: float = BM25_B, idf: dict[str, float] | None = None) -> list[float]:
    """Okapi BM25 of each document (a list of its words, repeats kept) for a set of query terms,
    with the document frequencies of these documents (`idf`, when the caller has it); 0 for a
    document with none of the terms."""
    wanted = set(terms)
    idf = bm25_idf(docs, wanted) if idf is None else idf
    counts = [Counter(w for w in doc if w in idf) for doc in docs]
    lengths = [len(doc) for doc in docs]
    n = len(counts)
    if not n or not wanted:
        return [0.0] * n
    avg = max(sum(lengths) / n, 1.0)
    return [sum(idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg)) for t, tf in c.items())
            for c, length in zip(counts, lengths, strict=True)]


def bm25_ceiling(idf: dict[str, float], *, k1: float = BM25_K1) -> float:
    """The most BM25 a document could score for the query (each query word that occurs, at its
    inverse document frequency, at saturation): what a text score is a share of."""
    return sum(idf.values()) * (k1 + 1)


def length_prior(length: int, average: float) -> float:
    """How much a fact says, against the learner's average: ln(its words) / ln(the average), 0 for
    a fact of one word, 1 for one of average length, 2 for one of the average squared. The words
    are the distinct ones the text side indexes (stop words left out). A turn of small talk
    ("Candles and board games?") sits near many questions for MiniLM while saying little; a prior
    on length prefers, among facts the query is about as near to, the one that says more. The
    average is floored at 2 words so that the ratio stays finite."""
    return math.log(max(length, 1)) / math.log(max(average, 2.0))


def mixed_score(*, vector: float, text_share: float, w_vector: float, w_text: float,
                length: float = 0.0, w_length: float = 0.0) -> float:
    """A fact's score before decay: 1 + w_vector x its vector score (cosine, lowered by hubness
    where that weight is set) + w_text x its text score as a share of the query's ceiling (0-1,
    `bm25_ceiling`) + w_length x its `length_prior`. Every term is on a scale fixed by its
    definition, not by a data set: a cosine, how much of what the query's words could score the
    fact holds, its length against the learner's average. Never below 0, so decay (a factor) keeps
    its meaning."""
    return max(0.0, 1.0 + w_vector * vector + w_text * text_share + w_length * length)


def rrf(rank: int | None, *, k: int = RRF_K) -> float:
    """One side's share of a fact's fused score: 1 / (k + rank), rank from 1; 0 when the side did
    not return the fact."""
    return 0.0 if rank is None else 1.0 / (k + rank)


def ranks(order: Sequence[int]) -> dict[int, int]:
    """{item: its rank from 1} for a best-first list."""
    return {item: n for n, item in enumerate(order, start=1)}
