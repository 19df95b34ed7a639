"""Speaker-aware search over facts stored as dialogue, "<Name>: <statement>" (`rules.speaker_of`).

A query that names a person whose statements this learner's memory holds ("Did Maya rely on
public transport before?") is searched among that person's statements only, and its vector is
made from the query with the name replaced by a pronoun ("Did they rely on public transport
before?"). In a short question the name dominates the MiniLM vector: every statement prefixed
"Maya:" then looks alike to it, and the words that carry the question decide too little. Facts
without a speaker prefix (what the coach's own extraction stores) are not affected, and neither
is a query that names nobody who speaks in the learner's memory.

Decided on the long-conversation benchmark (bench/bench_memory_longconv.py, README "Long-
conversation retrieval benchmark"). A speaker name of more than one word is not recognised."""

from __future__ import annotations

import re

from memory.models import Fact

_CANDIDATE = re.compile(r"\b([A-Z][a-z][A-Za-z-]*)(?:'s)?\b")
MAX_NAMES = 4  # capitalised words of one query checked against the learner's speakers


def named_speakers(*, learner_id: int, query: str) -> list[str]:
    """Names in the query that start one of the learner's facts as "<Name>:". One small query
    per capitalised word (at most MAX_NAMES), each stopping at the first matching fact."""
    names: list[str] = []
    for name in _CANDIDATE.findall(query):
        if name not in names:
            names.append(name)
    return [n for n in names[:MAX_NAMES]
            if Fact.objects.filter(learner_id=learner_id, content__startswith=f"{n}:").exists()]


def embedding_text(query: str, speakers: list[str]) -> str:
    """The query with each speaker's name replaced by a pronoun (possessive kept)."""
    for name in speakers:
        query = re.sub(rf"\b{re.escape(name)}'s\b", "their", query)
        query = re.sub(rf"\b{re.escape(name)}\b", "they", query)
    return query


def like_patterns(speakers: list[str]) -> list[str]:
    """SQL LIKE patterns for the statements of these speakers (a name is letters and '-', nothing
    that LIKE reads as a wildcard)."""
    return [f"{name}:%" for name in speakers]
