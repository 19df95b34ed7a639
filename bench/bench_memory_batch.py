"""Batch ingest and learner search through the Django/DRF stack in-process (middleware, Bearer
token auth, throttle, serializers; no socket): one conversation of memory/eval_data/longconv_v1.json
is posted as "<speaker>: <text>" items with occurred_at and external_id to
`POST /api/v1/memory/learners/<uuid>/facts/batch` (100 items per request), then its questions are
sent to `GET .../search?q=&limit=10`, and once more with `touch=false` in-process.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_memory CELERY_BROKER_URL=redis://…/<scratch db> \
      .venv/bin/python bench/run.py memory_batch

Reported: facts/s with the embedding done by the server (MiniLM, batched) and with client-sent
embeddings (the rules, the store and the outbox alone); for client-sent embeddings, the follow-ups
of each batch as they are now (ONE entity message naming all new facts) against the code before
it (one outbox row and publish per new fact, reproduced below in `_per_fact_followups` and
`_per_fact_rows`), requests of the two arms interleaved so machine load hits both alike, with the
broker publishes and connections per request counted; the batch serializer with the vector field
as it was and as it is; the entity task over 100 of these facts as one batched GLiNER call
against one task per fact; search p50/p95 over the stack and in-process."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from contextlib import contextmanager, nullcontext
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "memory" / "eval_data" / "longconv_v1.json"


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


@contextmanager
def _counting(app, counts: Counter):
    """Count the broker publishes and connections the code under test makes."""
    real_send, real_conn = app.send_task, app.connection_for_write

    def send(name, *args, **kwargs):
        counts["publishes"] += 1
        return real_send(name, *args, **kwargs)

    def conn(*args, **kwargs):
        counts["connections"] += 1
        return real_conn(*args, **kwargs)

    _ = app.amqp.send_task_message  # built once per process, asking for a connection: not a publish
    app.send_task, app.connection_for_write = send, conn
    try:
        yield
    finally:
        del app.send_task, app.connection_for_write


def _per_fact_followups(*, learner_id: int, created: list[int]) -> None:
    """`services.ingest._enqueue_followups` as it was before one message per batch: a row per fact."""
    from core.outbox.services import outbox_enqueue
    from memory.services.summaries import summary_enqueue_if_due

    for fact_id in created:
        outbox_enqueue(task_name="memory.extract_entities", args=[fact_id], queue="memory",
                       dedup_key=f"memory.extract_entities:{fact_id}")
    if created:
        summary_enqueue_if_due(learner_id=learner_id)


def _per_fact_rows(*, learner_id: int, created, since):
    """`batch._followup_rows` as it was then: the per-fact rows, found by their keys."""
    from django.db.models import Q

    from core.outbox.models import OutboxMessage

    if not created:
        return []
    keys = [f"memory.extract_entities:{fid}" for fid in created]
    summary = Q(dedup_key__startswith=f"memory.summarize:{learner_id}:", created_at__gte=since)
    return list(OutboxMessage.objects.filter(Q(dedup_key__in=keys) | summary, sent_at__isnull=True)
                .order_by("pk").values_list("pk", flat=True))


@contextmanager
def _before():
    import memory.batch
    import memory.services.ingest

    saved = memory.services.ingest._enqueue_followups, memory.batch._followup_rows
    memory.services.ingest._enqueue_followups, memory.batch._followup_rows = _per_fact_followups, _per_fact_rows
    try:
        yield
    finally:
        memory.services.ingest._enqueue_followups, memory.batch._followup_rows = saved


def _entity_rows(fact_ids: dict[str, list[int]], n: int) -> list[dict]:
    """The entity task over the same n facts (the two arms stored the same texts): one message of
    n ids (one batched GLiNER call, one transaction) against n messages of one id."""
    from core.llm import assets
    from memory import tasks
    from memory.models import Fact

    if not assets.gliner_model_dir().is_dir():
        print("# no GLiNER model: entity arms skipped (run `manage.py bloom_models`)", file=sys.stderr)
        return []
    one, per_fact = fact_ids["one message per batch"][:n], fact_ids["one message per fact"][:n]
    assert sorted(Fact.objects.filter(pk__in=one).values_list("content", flat=True)) == \
        sorted(Fact.objects.filter(pk__in=per_fact).values_list("content", flat=True))
    tasks.extract_entities([per_fact[0]])  # loading GLiNER is start-up, not extraction
    started = time.perf_counter()
    for fid in per_fact[1:]:
        tasks.extract_entities(fid)
    per_fact_rate = (len(per_fact) - 1) / (time.perf_counter() - started)
    started = time.perf_counter()
    out = tasks.extract_entities(one[1:])
    batched_rate = (len(one) - 1) / (time.perf_counter() - started)
    note = f"{len(one) - 1} facts, {out['kept']} mentions kept"
    return [
        {"bench": "memory.batch", "metric": "entities, one task per fact (before)", "value": per_fact_rate,
         "unit": "facts/s", "note": "GLiNER call + graph transaction per fact"},
        {"bench": "memory.batch", "metric": "entities, one task per batch (now)", "value": batched_rate,
         "unit": "facts/s", "note": note + "; one batched GLiNER call, one transaction"},
    ]


def _serializer_rows(body: list[dict]) -> list[dict]:
    """The batch input serializer on the same 100 items with vectors: the vector field as it was
    (DRF's ListField of FloatField, number by number) against `EmbeddingField` (one pass)."""
    from rest_framework import serializers

    from memory.api.batch import BatchInputSerializer, BatchItemSerializer

    class OldItem(BatchItemSerializer):
        embedding = serializers.ListField(child=serializers.FloatField(), required=False, allow_empty=False)

    class OldInput(BatchInputSerializer):
        items = OldItem(many=True, allow_empty=False)

    data = {"items": body[:100]}
    spent: dict[str, list[float]] = {"before": [], "now": []}
    for _ in range(5):  # interleaved
        for arm, cls in (("before", OldInput), ("now", BatchInputSerializer)):
            started = time.perf_counter()
            cls(data=data).is_valid(raise_exception=True)
            spent[arm].append(time.perf_counter() - started)
    return [{"bench": "memory.batch", "metric": f"batch serializer, 100 items with vectors ({arm})",
             "value": 1000 * pct(values, 50), "unit": "ms",
             "note": "DRF ListField(FloatField)" if arm == "before" else "EmbeddingField, one pass"}
            for arm, values in spent.items()]


def run(quick: bool) -> list[dict]:
    from celery import current_app
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
        outcomes: Counter = Counter()
        embed(["warm up"])  # loading the model is start-up, not ingest
        learner = Learner.objects.create(client=owner, display_name="batch-server-embeds")
        started = time.perf_counter()
        for start in range(0, len(items), 100):
            r = api.post(f"/api/v1/memory/learners/{learner.research_id}/facts/batch",
                         {"items": items[start:start + 100]}, format="json")
            assert r.status_code == 201, r.content[:300]
        server_rate = len(items) / (time.perf_counter() - started)
        vectors = embed([i["content"] for i in items])
        body = [{**i, "embedding": v} for i, v in zip(items, vectors, strict=True)]
        arms = {"one message per batch": nullcontext, "one message per fact": _before}
        learners = {arm: Learner.objects.create(client=owner, display_name=f"batch-{arm}") for arm in arms}
        spent: Counter = Counter()
        counts: dict[str, Counter] = {arm: Counter() for arm in arms}
        created: dict[str, list[int]] = {arm: [] for arm in arms}
        requests = 0
        for start in range(0, len(body), 100):
            requests += 1
            # Alternate which arm goes first, so neither always follows the other.
            for arm in (list(arms) if requests % 2 else list(arms)[::-1]):
                url = f"/api/v1/memory/learners/{learners[arm].research_id}/facts/batch"
                with arms[arm](), _counting(current_app, counts[arm]):
                    t0 = time.perf_counter()
                    r = api.post(url, {"items": body[start:start + 100]}, format="json")
                    spent[arm] += time.perf_counter() - t0
                assert r.status_code == 201, r.content[:300]
                created[arm] += [i["fact_id"] for i in r.json()["items"] if i["outcome"] in ("created", "surprise")]
                if arm == "one message per batch":
                    outcomes.update(i["outcome"] for i in r.json()["items"])
        from memory.models import Fact

        fact_ids = {arm: list(Fact.objects.filter(public_id__in=ids).order_by("pk").values_list("pk", flat=True))
                    for arm, ids in created.items()}
        note = f"{len(items)} turns, 100 per request; outcomes {dict(outcomes)}"
        rows.append({"bench": "memory.batch", "metric": "ingest, server embeds", "value": server_rate,
                     "unit": "facts/s", "note": note})
        for arm, label in (("one message per fact", "before"), ("one message per batch", "now")):
            c = counts[arm]
            rows += [
                {"bench": "memory.batch", "metric": f"ingest, client embeds, {arm} ({label})",
                 "value": len(body) / spent[arm], "unit": "facts/s", "note": "rules + store + outbox only"},
                {"bench": "memory.batch", "metric": f"broker publishes per request, {arm} ({label})",
                 "value": c["publishes"] / requests, "unit": "publishes",
                 "note": f"{c['publishes']} publishes, {c['connections']} connections, {requests} requests"},
            ]
        rows += _serializer_rows(body)
        rows += _entity_rows(fact_ids, 26 if quick else 101)
        learner = learners["one message per batch"]
        http, inproc = [], []
        for q in conv["questions"][: 30 if quick else None]:
            started = time.perf_counter()
            r = api.get(f"/api/v1/memory/learners/{learner.research_id}/search", {"q": q["question"], "limit": 10})
            http.append(time.perf_counter() - started)
            assert r.status_code == 200, r.content[:300]
            started = time.perf_counter()
            search_memory(learner_id=learner.pk, query=q["question"], limit=10, touch=False)
            inproc.append(time.perf_counter() - started)  # the query vector is cached by now
        rows += [
            {"bench": "memory.batch", "metric": "search over the stack p50", "value": 1000 * pct(http, 50),
             "unit": "ms", "note": f"p95 {1000 * pct(http, 95):.1f} ms, {len(http)} questions, new query each"},
            {"bench": "memory.batch", "metric": "search in-process, cached vector p50", "value": 1000 * pct(inproc, 50),
             "unit": "ms", "note": f"p95 {1000 * pct(inproc, 95):.1f} ms, touch=false"},
        ]
        print("\n".join(f"{r['metric']}: {r['value']:.1f} {r['unit']} ({r['note']})" for r in rows), file=sys.stderr)
    finally:
        from bench.bench_memory import _cleanup
        from memory.models import Entity, EntityRun, Mention, Relation
        from memory.services.access import facts_access_flush

        # The searches' access marks, before their facts are deleted: a flush the write-behind
        # thread has already started would otherwise deadlock with the DELETE.
        facts_access_flush()
        time.sleep(settings.BLOOM_MEMORY_ACCESS_FLUSH_SECONDS + 0.5)
        facts_access_flush()
        # The entity graph points at the facts _cleanup deletes with raw SQL.
        Mention.objects.filter(fact__learner__client=owner).delete()
        EntityRun.objects.filter(fact__learner__client=owner).delete()
        Relation.objects.filter(learner__client=owner).delete()
        Entity.objects.filter(learner__client=owner).delete()
        _cleanup(owner)
    return rows
