"""Batch ingest and learner search through the Django/DRF stack in-process (middleware, Bearer
token auth, throttle, serializers; no socket): one conversation of memory/eval_data/longconv_v1.json
is posted as "<speaker>: <text>" items with occurred_at and external_id to
`POST /api/v1/memory/learners/<uuid>/facts/batch` (100 items per request), then its questions are
sent to `GET .../search?q=&limit=10`, and once more with `touch=false` in-process.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_memory .venv/bin/python bench/run.py memory_batch

Reported: facts/s with the embedding done by the server (MiniLM, batched) and with client-sent
embeddings (the rules and the store alone); search p50/p95 over the stack and in-process."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "memory" / "eval_data" / "longconv_v1.json"


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def run(quick: bool) -> list[dict]:
    from django.conf import settings
    from rest_framework.test import APIClient

    from core.identity.models import ApiClient, Learner
    from core.identity.services import api_token_create
    from core.llm import embed
    from memory.selectors import search_memory

    conv = json.loads(DATA.read_text())["conversations"][1]
    turns = conv["turns"][:200] if quick else conv["turns"]
    owner = ApiClient.objects.create(name=f"bench-memory-batch-{time.time_ns()}")
    _, raw = api_token_create(client=owner, name="bench")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    rows: list[dict] = []
    try:
        items = [{"content": f"{t['speaker']}: {t['text']}", "occurred_at": t["at"] + ":00Z", "external_id": t["id"]}
                 for t in turns]
        rates = {}
        outcomes: Counter = Counter()
        embed(["warm up"])  # loading the model is start-up, not ingest
        for arm in ("server embeds", "client embeds"):
            learner = Learner.objects.create(client=owner, display_name=f"batch-{arm}")
            url = f"/api/v1/memory/learners/{learner.research_id}/facts/batch"
            body = items
            if arm == "client embeds":
                vectors = embed([i["content"] for i in items])
                body = [{**i, "embedding": v} for i, v in zip(items, vectors, strict=True)]
            started = time.perf_counter()
            for start in range(0, len(body), 100):
                r = api.post(url, {"items": body[start:start + 100]}, format="json")
                assert r.status_code == 201, r.content[:300]
                if arm == "client embeds":
                    outcomes.update(i["outcome"] for i in r.json()["items"])
            rates[arm] = len(body) / (time.perf_counter() - started)
        http, inproc = [], []
        for q in conv["questions"][: 30 if quick else None]:
            started = time.perf_counter()
            r = api.get(f"/api/v1/memory/learners/{learner.research_id}/search", {"q": q["question"], "limit": 10})
            http.append(time.perf_counter() - started)
            assert r.status_code == 200, r.content[:300]
            started = time.perf_counter()
            search_memory(learner_id=learner.pk, query=q["question"], limit=10, touch=False)
            inproc.append(time.perf_counter() - started)  # the query vector is cached by now
        note = f"{len(items)} turns, 100 per request; outcomes {dict(outcomes)}"
        rows += [
            {"bench": "memory.batch", "metric": "ingest, server embeds", "value": rates["server embeds"],
             "unit": "facts/s", "note": note},
            {"bench": "memory.batch", "metric": "ingest, client embeds", "value": rates["client embeds"],
             "unit": "facts/s", "note": "rules + store + outbox only"},
            {"bench": "memory.batch", "metric": "search over the stack p50", "value": 1000 * pct(http, 50),
             "unit": "ms", "note": f"p95 {1000 * pct(http, 95):.1f} ms, {len(http)} questions, new query each"},
            {"bench": "memory.batch", "metric": "search in-process, cached vector p50", "value": 1000 * pct(inproc, 50),
             "unit": "ms", "note": f"p95 {1000 * pct(inproc, 95):.1f} ms, touch=false"},
        ]
        print("\n".join(f"{r['metric']}: {r['value']:.1f} {r['unit']} ({r['note']})" for r in rows), file=sys.stderr)
    finally:
        from bench.bench_memory import _cleanup
        from memory.services.access import facts_access_flush

        # The searches' access marks, before their facts are deleted: a flush the write-behind
        # thread has already started would otherwise deadlock with the DELETE.
        facts_access_flush()
        time.sleep(settings.BLOOM_MEMORY_ACCESS_FLUSH_SECONDS + 0.5)
        facts_access_flush()
        _cleanup(owner)
    return rows
