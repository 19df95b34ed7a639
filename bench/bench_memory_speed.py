"""Where a memory search and a batch ingest spend their time, arm against arm in one run (same
process, same data: one conversation of memory/eval_data/longconv_v1.json, stored as
"<speaker>: <text>" facts, and its questions):

- query embedding of a new text: SentenceTransformer.encode, the direct torch path, the ONNX graph
  with 1 and 2 threads (built into the model cache by `manage.py bloom_models` if missing), and a
  query-cache hit;
- in-process search with the vector given: read-only (`touch=False`), access marks written behind
  (the default), and marks written inside the search (BLOOM_MEMORY_ACCESS_FLUSH_SECONDS=0);
- ingest with client-sent vectors (the rules, the store and the outbox): the follow-up tasks
  published one broker connection per row (`ingest.ingest_facts`, what every caller had) and all
  together (`batch.ingest_batch`, the batch endpoint), with the broker connections counted.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_memory CELERY_BROKER_URL=redis://127.0.0.1:6379/6 \\
      .venv/bin/python bench/run.py memory_speed

The benches leave the entity tasks they publish on the broker: use a scratch Redis database."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "memory" / "eval_data" / "longconv_v1.json"


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def _ms(values: list[float]) -> tuple[float, float]:
    return 1000 * pct(values, 50), 1000 * pct(values, 95)


def _time_each(fn, inputs) -> list[float]:
    out = []
    for x in inputs:
        started = time.perf_counter()
        fn(x)
        out.append(time.perf_counter() - started)
    return out


def bench_embedding(questions: list[str]) -> dict[str, list[float]]:
    from core.llm.providers import minilm, minilm_onnx
    from memory.selectors import embed_query

    encoder = minilm.load()
    arms = {"torch, SentenceTransformer.encode":
            lambda q: encoder.encode([q], normalize_embeddings=True, show_progress_bar=False),
            "torch, direct (tokenizer + model + pooling)": lambda q: minilm._encode_direct(encoder, [q])}
    try:
        result = minilm_onnx.export(log=lambda line: print(line, file=sys.stderr))
        for threads in (1, 2):
            sess = minilm_onnx._new_session(result.path, threads=threads)
            arms[f"onnxruntime, {threads} thread{'s' if threads > 1 else ''}"] = (
                lambda q, s=sess: minilm_onnx.encode(s, encoder, [q], batch_size=32))
    except (ImportError, minilm_onnx.ExportError) as exc:
        print(f"# onnx arm skipped: {exc}", file=sys.stderr)
    # Interleaved (each question through every arm in turn): load from other work on the machine
    # then falls on all arms alike.
    lat: dict[str, list[float]] = {name: [] for name in arms}
    for fn in arms.values():
        fn("warm up")
    for q in questions:
        for name, fn in arms.items():
            started = time.perf_counter()
            fn(q)
            lat[name].append(time.perf_counter() - started)
    embed_query(questions[0])
    lat["query cache hit (embed_query)"] = _time_each(embed_query, [questions[0]] * len(questions))
    return lat


def run(quick: bool) -> list[dict]:
    from celery import current_app
    from django.apps import apps
    from django.test import override_settings

    from bench.bench_memory import _cleanup
    from core.llm import embed
    from memory.batch import ingest_batch
    from memory.ingest import ingest_facts
    from memory.selectors import search_memory
    from memory.services.access import facts_access_flush

    conv = json.loads(DATA.read_text())["conversations"][2]
    turns = conv["turns"][:200] if quick else conv["turns"]
    questions = [q["question"] for q in conv["questions"]][: 40 if quick else None]
    rows: list[dict] = []

    def row(metric: str, values: list[float], note: str = "") -> None:
        p50, p95 = _ms(values)
        rows.append({"bench": "memory.speed", "metric": metric, "value": p50, "unit": "ms p50",
                     "note": f"p95 {p95:.2f} ms, n={len(values)}" + (f"; {note}" if note else "")})

    for name, values in bench_embedding([f"{q} ({i})" for i, q in enumerate(questions)]).items():
        row(f"query embedding: {name}", values)

    ApiClient = apps.get_model("identity", "ApiClient")
    Learner = apps.get_model("identity", "Learner")
    owner = ApiClient.objects.create(name=f"bench-memory-speed-{time.time_ns()}")
    opened: list[int] = []
    real_connection = current_app.connection_for_write

    def counting(*args, **kwargs):
        opened.append(1)
        return real_connection(*args, **kwargs)

    current_app.connection_for_write = counting
    try:
        texts = [f"{t['speaker']}: {t['text']}" for t in turns]
        vectors = embed(texts)
        items = [{"fact_type": "insight", "content": c, "embedding": v, "occurred_at": t["at"] + ":00Z",
                  "external_id": t["id"]} for c, v, t in zip(texts, vectors, turns, strict=True)]
        learners = {}
        for arm, fn in (("one connection per row", ingest_facts), ("published together", ingest_batch)):
            learner = learners[arm] = Learner.objects.create(client=owner, display_name=f"speed-{arm}")
            opened.clear()
            started = time.perf_counter()
            for start in range(0, len(items), 100):
                fn(learner_id=learner.pk, items=items[start:start + 100], source_agent="bench", service="bench.speed")
            rate = len(items) / (time.perf_counter() - started)
            rows.append({"bench": "memory.speed", "metric": f"ingest, client vectors, follow-ups {arm}",
                         "value": rate, "unit": "facts/s",
                         "note": f"{len(items)} turns in batches of 100; {len(opened)} broker connections"})
        learner = learners["published together"]
        qvecs = embed(questions)
        for arm, touch, flush in (("read-only (touch=false)", False, None),
                                  ("access marks written behind", True, 1.0),
                                  ("access marks written in the search", True, 0.0)):
            overrides = {} if flush is None else {"BLOOM_MEMORY_ACCESS_FLUSH_SECONDS": flush}
            with override_settings(**overrides):
                lat = _time_each(lambda qv, touch=touch: search_memory(
                    learner_id=learner.pk, query=qv[0], limit=10, touch=touch, query_embedding=qv[1]),
                    list(zip(questions, qvecs, strict=True)))
            row(f"search, vector given: {arm}", lat, f"{len(turns)} facts")
        facts_access_flush()
    finally:
        current_app.connection_for_write = real_connection
        _cleanup(owner)
    print("\n".join(f"{r['metric']}: {r['value']:.2f} {r['unit']} ({r['note']})" for r in rows), file=sys.stderr)
    return rows
