"""What one learner search costs on the HTTP path, part by part: `GET
/api/v1/memory/learners/<uuid>/search?q=…&limit=10&touch=false` through the whole Django/DRF
stack in-process (middleware, URL resolution, Bearer token auth, the per-client throttle, the
query serializer, the learner look-up, the search, rendering), and each of those parts timed on
its own on the same request, in one run:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_search .venv/bin/python bench/run.py memory_http

Three conversations of memory/eval_data/longconv_v1.json (conv-0 to conv-2, 1,594 turns, about
1,050 facts after the ingest rules) are stored for one learner (client-sent vectors); the
questions' query vectors are cached before timing, so no embedding is measured. (Before the
fourth round this bench stored one conversation, 542 facts; the "search as in the third round" arm
it kept, a swapped SQL text of the old ranking, went with that ranking in the fourteenth round.)
Parts are timed question by question, interleaved with the full request, so load hits them alike.
"rest of the stack" is the full request minus the parts: middleware, routing, DRF dispatch and
content negotiation."""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "memory" / "eval_data" / "longconv_v1.json"


def store_turns(learner_id: int, turns: list[dict]) -> int:
    """Each turn as "<speaker>: <text>" through the batch ingest (client-sent vectors, 100 a batch,
    every rule applied); returns how many facts the learner then has."""
    from core.llm import embed
    from memory.batch import ingest_batch
    from memory.models import Fact

    contents = [f"{t['speaker']}: {t['text']}" for t in turns]
    items = [{"fact_type": "insight", "content": c, "embedding": v}
             for c, v in zip(contents, embed(contents), strict=True)]
    for start in range(0, len(items), 100):
        ingest_batch(learner_id=learner_id, items=items[start:start + 100], source_agent="bench", service="bench")
    return Fact.objects.filter(learner_id=learner_id).count()


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def run(quick: bool) -> list[dict]:
    from django.core.cache import cache
    from rest_framework.renderers import JSONRenderer
    from rest_framework.request import Request
    from rest_framework.test import APIClient, APIRequestFactory

    from core.identity.auth import ApiTokenAuthentication
    from core.identity.models import ApiClient, Learner
    from core.identity.services import api_token_create
    from core.throttling import ClientRateThrottle
    from memory.api import queries
    from memory.api.serializers import SearchQuerySerializer
    from memory.api.views import LearnerSearchView
    from memory.selectors import search_memory

    convs = json.loads(DATA.read_text())["conversations"][: 1 if quick else 3]
    turns = [t for conv in convs for t in conv["turns"]][: 200 if quick else None]
    questions = [q["question"] for conv in convs for q in conv["questions"]][: 30 if quick else None]
    owner = ApiClient.objects.create(name=f"bench-memory-http-{time.time_ns()}")
    _, raw = api_token_create(client=owner, name="bench")
    learner = Learner.objects.create(client=owner, display_name="http")
    rows: list[dict] = []
    try:
        facts = store_turns(learner.pk, turns)
        for q in questions:  # the query vectors are cached from here on
            search_memory(learner_id=learner.pk, query=q, limit=10, touch=False)
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        factory = APIRequestFactory()
        url = f"/api/v1/memory/learners/{learner.research_id}/search"
        view = LearnerSearchView()
        auth, throttle, renderer = ApiTokenAuthentication(), ClientRateThrottle(), JSONRenderer()
        t: dict[str, list[float]] = defaultdict(list)
        for _ in range(1 if quick else 3):
            cache.clear()  # the throttle's counters (two counts a question): stay under the rate
            for q in questions:
                params = {"q": q, "limit": 10, "touch": "false"}
                s0 = time.perf_counter()
                r = api.get(url, params)
                t["full request"].append(time.perf_counter() - s0)
                assert r.status_code == 200, r.content[:300]
                request = Request(factory.get(url, params, HTTP_AUTHORIZATION=f"Bearer {raw}"))
                s0 = time.perf_counter()
                client, _token = auth.authenticate(request)
                t["auth (Bearer token look-up)"].append(time.perf_counter() - s0)
                request.user = client
                s0 = time.perf_counter()
                throttle.allow_request(request, view)
                t["throttle (cache counter)"].append(time.perf_counter() - s0)
                s0 = time.perf_counter()
                s = SearchQuerySerializer(data=request.query_params)
                s.is_valid(raise_exception=True)
                t["query serializer"].append(time.perf_counter() - s0)
                s0 = time.perf_counter()
                found = queries.learner_for(research_id=learner.research_id, client_id=client.pk, staff=False)
                t["learner look-up"].append(time.perf_counter() - s0)
                s0 = time.perf_counter()
                results = queries.search(learner_id=found.pk, query=q, limit=10, filters=s.validated_data,
                                         touch=False)
                t["search (SQL + hit annotation)"].append(time.perf_counter() - s0)
                s0 = time.perf_counter()
                renderer.render({"results": results})
                t["render JSON"].append(time.perf_counter() - s0)
        parts = [k for k in t if k != "full request"]
        rest = [full - sum(t[k][i] for k in parts) for i, full in enumerate(t["full request"])]
        t["rest of the stack (full − parts)"] = rest
        n = len(t["full request"])
        for name, values in t.items():
            rows.append({"bench": "memory.http", "metric": f"{name} p50", "value": 1000 * pct(values, 50),
                         "unit": "ms", "note": f"p95 {1000 * pct(values, 95):.2f} ms, {n} requests, {facts} facts"})
        print("\n".join(f"{r['metric']}: {r['value']:.2f} ms ({r['note']})" for r in rows), file=sys.stderr)
    finally:
        from bench.bench_memory import _cleanup

        _cleanup(owner)
    return rows
