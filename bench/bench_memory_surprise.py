"""Surprise flags on statement pairs written on purpose: recall on contradictions, precision, and
the promise that a contradiction is never merged into the older statement.

The pairs (`memory/eval_data/contradictions_v1.json`) were written by hand, for variety, by a
session that had not read the comparison code: contradictions of one person (negations, habits
stopped, antonyms without a negation word, changed numbers, places, goals) and look-alike pairs
that are not contradictions (restatements, the other speaker, advice, compatible additions,
questions, hypotheticals). Each pair is stored for a learner of its own through the ingest
service, the older statement first, with the real MiniLM embedding and the real database; the
newer statement's outcome is read back:

- flagged: outcome "surprise" against the older statement;
- merged: the newer was folded into the older ("duplicate" or "strengthened") — for a
  contradiction, the promise broken (it would be lost);
- kept: stored as a fact of its own, unflagged.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench python bench/run.py memory_surprise
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ROOT / "memory" / "eval_data" / "contradictions_v1.json"


def _style(pair: dict) -> str:
    return "coach facts" if pair["older"].lower().startswith("the learner") else "dialogue"


def evaluate() -> dict:
    from core.identity.models import ApiClient, Learner
    from core.llm import embed
    from memory import rules
    from memory.services.ingest import facts_ingest

    pairs = json.loads(PAIRS.read_text())["pairs"]
    owner = ApiClient.objects.create(name=f"bench-surprise-{time.time_ns()}")
    outcomes = []
    for pair in pairs:
        learner = Learner.objects.create(client=owner, display_name=f"surprise-{pair['id']}")
        older, newer = (rules.clean_text(pair["older"]), rules.clean_text(pair["newer"]))
        vectors = embed([older, newer])
        first = facts_ingest(learner_id=learner.pk, facts=[rules.CleanFact("insight", older, 0.6)],
                             embeddings=[vectors[0]], source_agent="bench", service="bench")
        second = facts_ingest(learner_id=learner.pk, facts=[rules.CleanFact("insight", newer, 0.6)],
                              embeddings=[vectors[1]], source_agent="bench", service="bench")
        item, older_id = second.items[0], first.items[0].fact_id
        if item.outcome == "surprise" and item.conflicts_with == older_id:
            got = "flagged"
        elif item.outcome in ("duplicate", "strengthened"):
            got = "merged"
        else:
            got = "kept"
        outcomes.append({**pair, "style": _style(pair), "got": got, "rule": getattr(item, "rule", "")})
    return {"pairs": outcomes}


def _rates(rows: list[dict]) -> dict:
    contradictions = [r for r in rows if r["contradiction"]]
    flagged = [r for r in rows if r["got"] == "flagged"]
    right = [r for r in flagged if r["contradiction"]]
    return {"contradictions": len(contradictions), "controls": len(rows) - len(contradictions),
            "recall": len(right) / max(1, len(contradictions)),
            "precision": len(right) / len(flagged) if flagged else None, "flagged": len(flagged),
            "contradictions merged": sum(r["got"] == "merged" for r in contradictions)}


def run(quick: bool) -> list[dict]:
    out = evaluate()
    rows_out = []
    groups = {"all": out["pairs"], **{s: [r for r in out["pairs"] if r["style"] == s]
                                      for s in ("dialogue", "coach facts")}}
    for name, rows in groups.items():
        rates = _rates(rows)
        rows_out += [
            {"bench": "memory.surprise", "metric": f"{name}: recall on contradictions", "value": rates["recall"],
             "unit": "", "note": f"{rates['contradictions']} contradictions, {rates['controls']} look-alikes"},
            {"bench": "memory.surprise", "metric": f"{name}: precision",
             "value": rates["precision"] if rates["precision"] is not None else "none flagged", "unit": "",
             "note": f"{rates['flagged']} flagged"},
            {"bench": "memory.surprise", "metric": f"{name}: contradictions merged into the older", "unit": "",
             "value": rates["contradictions merged"], "note": "must be 0: merged means lost"},
        ]
    missed = Counter(r["kind"] for r in out["pairs"] if r["contradiction"] and r["got"] != "flagged")
    wrong = [r["id"] for r in out["pairs"] if not r["contradiction"] and r["got"] == "flagged"]
    print("missed contradictions by kind: " + ", ".join(f"{k} {n}" for k, n in missed.most_common()),
          file=sys.stderr)
    print("look-alikes flagged: " + (", ".join(wrong) or "none"), file=sys.stderr)
    for r in out["pairs"]:
        if r["contradiction"] and r["got"] == "merged":
            print(f"MERGED {r['id']}: {r['older']!r} <- {r['newer']!r}", file=sys.stderr)
    return rows_out
