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

from django.db import connection

from core import statements

_CANDIDATE = re.compile(r"\b([A-Z][a-z][A-Za-z-]*)(?:'s)?\b")
MAX_NAMES = 4  # capitalised words of one query checked against the learner's speakers


# Which of the candidate names start one of the learner's facts: one statement for all of them,
# each EXISTS stopping at its first matching fact (VALUES names its column column1 on both
# databases). On PostgreSQL each probe is a look-up in the speaker index (migration 0011): a
# name is letters and '-', at most 64 characters, so it equals the text before a fact's first ':'
# exactly when the fact starts "<name>:". SQLite (the embedded default) filters the learner's
# facts with LIKE.
_SPEAKERS_SQL = """
SELECT v.column1 FROM (VALUES {rows}) AS v
WHERE EXISTS (SELECT 1 FROM memory_fact f WHERE f.learner_id = %s AND {match})
"""
_MATCH = {"postgresql": "left(split_part(f.content, ':', 1), 64) = v.column1",
          "sqlite": "f.content LIKE v.column1 || ':%%'"}
MAX_NAME_CHARS = 64


def named_speakers(*, learner_id: int, query: str) -> list[str]:
    """Names in the query (capitalised words, at most MAX_NAMES) that start one of the learner's
    facts as "<Name>:", in query order. No query when the text has no capitalised word."""
    names: list[str] = []
    for name in _CANDIDATE.findall(query):
        if name not in names and len(name) <= MAX_NAME_CHARS:
            names.append(name)
    names = names[:MAX_NAMES]
    if not names:
        return []
    sql = _SPEAKERS_SQL.format(rows=", ".join(["(%s)"] * len(names)), match=_MATCH[connection.vendor])
    found = {row["column1"] for row in statements.fetch_dicts(sql, [*names, learner_id])}
    return [n for n in names if n in found]


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
