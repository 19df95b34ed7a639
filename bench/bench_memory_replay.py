"""Extraction on the chat path.

Part A (always): the cost extraction adds to the reply's persistence transaction — the outbox row
plus the after-commit publish to the broker — measured as the ratio of the persist step with vs
without `outbox_enqueue`, on the real database and broker. (The reply itself never waits for
extraction: that runs in the worker.)

Part B (BENCH_MEMORY_REPLAY=1): a 20-turn learner conversation replayed through a real Celery
worker with the real local LLM: facts appear, a summary after the threshold, and replaying the same
turns again adds no duplicate facts. Slow on 2 shared cores (40+ model calls).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_mem CELERY_BROKER_URL=redis://127.0.0.1:6379/5 \
      python bench/run.py memory_replay
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "memory" / "eval_data" / "retrieval_v1.json"


def _setup(tag: str):
    from django.apps import apps

    ApiClient = apps.get_model("coaching", "ApiClient")
    Learner = apps.get_model("coaching", "Learner")
    Conversation = apps.get_model("coaching", "Conversation")
    client = ApiClient.objects.create(name=f"bench-replay-{tag}-{time.time_ns()}")
    learner = Learner.objects.create(client=client, display_name="replay")
    return client, learner, Conversation.objects.create(learner=learner)


def part_a(rows: list[dict], n: int = 150) -> None:
    from django.apps import apps
    from django.db import transaction

    from bloom.celery import app
    from bloom.outbox.services import outbox_enqueue

    Message = apps.get_model("coaching", "Message")
    client, _, conv = _setup("a")
    on, off = [], []
    try:
        for i in range(2 * n):
            learner_msg = Message.objects.create(conversation=conv, role="learner", content=f"turn {i}")
            extraction = i % 2 == 0  # interleaved so load drift hits both arms equally
            t = time.perf_counter()
            with transaction.atomic():
                locked = Message.objects.select_for_update().get(pk=learner_msg.pk)
                Message.objects.create(conversation=conv, role="coach", content="reply " * 40, reply_to=locked)
                Message.objects.filter(pk=locked.pk).update(status="answered")
                if extraction:
                    outbox_enqueue(task_name="memory.bench_noop", args=[locked.pk], queue="memory",
                                   dedup_key=f"bench-replay:{locked.pk}:{time.time_ns()}")
            (on if extraction else off).append((time.perf_counter() - t) * 1000)
        p_on, p_off = statistics.median(on), statistics.median(off)
        rows += [
            {"bench": "memory.replay", "metric": "persist p50 extraction off", "value": p_off, "unit": "ms",
             "note": f"{n} turns"},
            {"bench": "memory.replay", "metric": "persist p50 extraction on", "value": p_on, "unit": "ms",
             "note": "+ outbox row + after-commit publish"},
            {"bench": "memory.replay", "metric": "enqueue overhead", "value": p_on - p_off, "unit": "ms",
             "note": "added to a reply that takes seconds to generate"},
        ]
    finally:
        from bloom.outbox.models import OutboxMessage

        OutboxMessage.objects.filter(task_name="memory.bench_noop").delete()
        app.control.purge()
        client.delete()


def part_b(rows: list[dict]) -> None:
    from celery.contrib.testing.worker import start_worker
    from django.apps import apps
    from django.db import transaction

    from bloom.celery import app
    from bloom.outbox.services import outbox_enqueue
    from memory.models import ExtractionRun, Fact, Summary

    Message = apps.get_model("coaching", "Message")
    data = json.loads(DATA.read_text())
    turns = data["conversations"][0]["turns"] + data["conversations"][1]["turns"]  # 20 learner turns
    client, learner, conv = _setup("b")

    def replay(tag: str) -> float:
        ids = []
        for i, text in enumerate(turns):
            with transaction.atomic():
                msg = Message.objects.create(conversation=conv, role="learner", content=text, status="answered")
                outbox_enqueue(task_name="memory.extract_facts", args=[msg.pk], queue="memory",
                               dedup_key=f"bench-{tag}:{msg.pk}:{i}")
            ids.append(msg.pk)
        t = time.perf_counter()
        while ExtractionRun.objects.filter(message_id__in=ids).count() < len(ids):
            if time.perf_counter() - t > 3600:
                raise TimeoutError("extraction did not finish")
            time.sleep(1)
        return time.perf_counter() - t

    try:
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False, queues=["memory"],
                          shutdown_timeout=60):
            first_s = replay("first")
            facts_first = Fact.objects.filter(learner=learner).count()
            deadline = time.time() + 600
            while not Summary.objects.filter(learner=learner).exists() and time.time() < deadline:
                time.sleep(1)
            summaries = Summary.objects.filter(learner=learner).count()
            second_s = replay("second")
            facts_second = Fact.objects.filter(learner=learner).count()
        runs = ExtractionRun.objects.filter(learner=learner)
        rows += [
            {"bench": "memory.replay", "metric": "facts after 20 turns", "value": facts_first, "unit": "",
             "note": f"real worker + real LLM, {first_s:.0f} s"},
            {"bench": "memory.replay", "metric": "summaries", "value": summaries, "unit": "",
             "note": "threshold BLOOM_SUMMARY_THRESHOLD"},
            {"bench": "memory.replay", "metric": "new facts on replay", "value": facts_second - facts_first,
             "unit": "", "note": f"strengthened {sum(r.strengthened for r in runs)}, exact duplicates dropped "
                                 f"{sum(r.duplicates for r in runs)}, {second_s:.0f} s"},
        ]
    finally:
        Fact.objects.filter(learner=learner).delete()
        client.delete()


def run(quick: bool) -> list[dict]:
    rows: list[dict] = []
    part_a(rows, n=60 if quick else 150)
    if os.environ.get("BENCH_MEMORY_REPLAY") == "1":
        part_b(rows)
    return rows
