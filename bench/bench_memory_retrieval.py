"""Retrieval quality on the shipped labelled set (memory/eval_data/retrieval_v1.json) with the real
MiniLM embeddings and the real hybrid search: each learner turn is stored as a passage (no chat
model), each question is searched, recall@5 (and @1, MRR) of the evidence turn is reported.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_mem python bench/run.py memory_retrieval
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "memory" / "eval_data" / "retrieval_v1.json"


def evaluate(k: int = 5, weights: tuple[float, ...] = ()) -> dict:
    """Recall with memory.conf's fusion weights and, for each w in `weights`, with the vector
    weighed w and the text 1 - w (same stored facts, same run)."""
    from django.apps import apps

    from memory import conf
    from memory.ingest import ingest_facts
    from memory.selectors import search_memory

    data = json.loads(DATA.read_text())
    ApiClient = apps.get_model("identity", "ApiClient")
    Learner = apps.get_model("identity", "Learner")
    client = ApiClient.objects.create(name="bench-memory-retrieval")
    try:
        learners = {}
        for conv in data["conversations"]:
            learner = Learner.objects.create(client=client, display_name=f"eval-{conv['id']}")
            learners[conv["id"]] = (learner.pk, conv["turns"])
            ingest_facts(learner_id=learner.pk, items=[{"fact_type": "insight", "content": t} for t in conv["turns"]],
                         source_agent="eval", service="bench.retrieval")
        out = {}
        default = (conf.SEARCH_W_VECTOR, conf.SEARCH_W_TEXT)
        for w in (None, *weights):
            if w is not None:
                conf.SEARCH_W_VECTOR, conf.SEARCH_W_TEXT = w, 1 - w
            try:
                out["default" if w is None else f"w{w}"] = _score(data, learners, k, search_memory)
            finally:
                conf.SEARCH_W_VECTOR, conf.SEARCH_W_TEXT = default
        from bench.bench_memory_longconv import MIX_BEFORE, PREVIOUS_RANKING, ranking

        with ranking({"conf.SEARCH_W_LENGTH": 0.0}):  # "no length prior"
            out["no length prior"] = _score(data, learners, k, search_memory)
        with ranking(MIX_BEFORE):  # the mix before the length prior replaced hubness
            out["mix before"] = _score(data, learners, k, search_memory)
        with ranking(PREVIOUS_RANKING):  # the reciprocal-rank fusion the mix replaced
            out["rrf before"] = _score(data, learners, k, search_memory)
        return out
    finally:
        client.delete()


def _score(data: dict, learners: dict, k: int, search_memory) -> dict:
    hits_k = hits_1 = 0
    rr = 0.0
    misses = []
    for q in data["questions"]:
        learner_id, turns = learners[q["conversation"]]
        results = search_memory(learner_id=learner_id, query=q["q"], limit=k, touch=False)
        contents = [r["content"] for r in results]
        target = turns[q["evidence"]]
        if target in contents:
            rank = contents.index(target) + 1
            hits_k += 1
            hits_1 += rank == 1
            rr += 1 / rank
        else:
            misses.append(q["q"])
    n = len(data["questions"])
    return {"n": n, "recall_at_k": hits_k / n, "recall_at_1": hits_1 / n, "mrr": rr / n, "misses": misses}


def run(quick: bool) -> list[dict]:
    # BENCH_RETRIEVAL_WEIGHTS="0.8,0.9": the same questions with other fusion weights (vector w, text 1 - w).
    weights = tuple(float(w) for w in os.environ.get("BENCH_RETRIEVAL_WEIGHTS", "").split(",") if w.strip())
    rows = []
    for arm, res in evaluate(weights=weights).items():
        note = f"{res['n']} questions, 3 conversations, MiniLM + hybrid search ({arm} weights)"
        rows += [
            {"bench": "memory.retrieval", "metric": f"{arm}: recall@5", "value": res["recall_at_k"], "unit": "",
             "note": note},
            {"bench": "memory.retrieval", "metric": f"{arm}: recall@1", "value": res["recall_at_1"], "unit": "",
             "note": ""},
            {"bench": "memory.retrieval", "metric": f"{arm}: MRR@5", "value": res["mrr"], "unit": "",
             "note": ("misses: " + "; ".join(res["misses"]))[:200] if res["misses"] else "no misses"},
        ]
    return rows
