"""Extraction on the chat path.

Part A: the cost extraction adds to the reply's persistence transaction — the outbox row plus the
after-commit publish to the broker — as the ratio of the persist step with vs without
`outbox_enqueue`, on the real database and broker.

Part B (skipped with --quick): a 20-turn conversation replayed through the real engine (the same
`message_receive` + `turn_run` the API calls, real llama.cpp in this process) with a real Celery
worker *process* doing extraction, entities and summaries with its own llama.cpp, in one run:

- two learners with the same history (12 facts and a summary), profile and 20 learner turns;
  arm ON has extraction on (`BLOOM_MEMORY_EXTRACTION`), arm OFF has it off;
- the OFF arm replays, turn by turn, the exact memory block the ON arm's reply saw
  (`Turn.context_snapshot`), so both arms send the model the same prompts: the only difference left
  is the extraction running in the worker process;
- blocks run ON(1-10) OFF(1-10) ON(11-20) OFF(11-20); after an ON block its extraction backlog is
  finished before the OFF block starts (not timed), so nothing extracts while OFF is measured;
- between turns the "learner" thinks for BENCH_REPLAY_THINK_S seconds (default 6), the same in both
  arms; the worker uses that time, and yields to a turn that starts (core.llm.priority);
- reply latency is the wall time from receiving the message to the stored reply.

Then the queue is drained and the ON learner's facts and summaries counted, and the same 20 turns'
extraction replayed again (same text, new messages): new facts on replay should be 0.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_mem CELERY_BROKER_URL=redis://127.0.0.1:6379/5 \
      python bench/run.py memory_replay
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "memory" / "eval_data" / "retrieval_v1.json"


def _setup(tag: str):
    from django.apps import apps

    ApiClient = apps.get_model("identity", "ApiClient")
    Learner = apps.get_model("identity", "Learner")
    Conversation = apps.get_model("identity", "Conversation")
    client = ApiClient.objects.create(name=f"bench-replay-{tag}-{time.time_ns()}")
    learner = Learner.objects.create(client=client, display_name="replay")
    return client, learner, Conversation.objects.create(learner=learner)


def part_a(rows: list[dict], n: int = 150) -> None:
    from django.apps import apps
    from django.db import transaction

    from bloom.celery import app
    from core.outbox.services import outbox_enqueue

    Message = apps.get_model("identity", "Message")
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
        from core.outbox.models import OutboxMessage

        OutboxMessage.objects.filter(task_name="memory.bench_noop").delete()
        app.control.purge()
        client.delete()


SEED_FACTS = [
    ("preference", "Prefers to study in the evening after work, about 30 minutes."),
    ("barrier", "Gets distracted by the phone during practice."),
    ("progress", "Finished the first unit of the course last week."),
    ("insight", "Remembers words better when saying them out loud."),
    ("preference", "Likes short flashcard sessions on the commute."),
    ("barrier", "Travels for work twice a month and misses sessions then."),
    ("progress", "Can introduce themselves and order food without notes."),
    ("insight", "Motivation is higher after a session with a tutor."),
    ("preference", "Wants one longer session on Saturday mornings."),
    ("barrier", "Feels tired on Thursday evenings after late meetings."),
    ("progress", "Kept a four-day streak in the app."),
    ("insight", "Learns grammar best from example sentences, not rules."),
]
SEED_SUMMARY = ("An adult learner studying after work: evenings and Saturday mornings work best, the phone and "
                "work travel get in the way, steady progress through the first unit, and speaking aloud and "
                "example sentences help most.")


def _replay_learner(client, tag: str):
    from coaching import services as coaching_services
    from core.llm import embed
    from memory import rules
    from memory.selectors import summaries_for
    from memory.services.ingest import facts_ingest
    from memory.services.summaries import summary_create

    learner = coaching_services.learner_create(client=client, display_name=f"replay {tag}")
    coaching_services.profile_update(learner=learner, primary_goal="speak Spanish for a trip to Madrid",
                                     goal_category="language", weekly_hours=3, best_time="evening", confidence=6)
    facts = [rules.validate_fact({"fact_type": t, "content": c, "confidence": 0.8}, strict=True) for t, c in SEED_FACTS]
    vectors = embed([f.content for f in facts])
    with _no_followups():
        result = facts_ingest(learner_id=learner.pk, facts=facts, embeddings=vectors, service="bench.seed")
        summary_create(learner_id=learner.pk, fact_ids=result.created, text=SEED_SUMMARY, model="seed")
    assert summaries_for(learner_id=learner.pk).count() == 1
    conversation = coaching_services.conversation_start(learner=learner)
    return learner, conversation


class _no_followups:
    """Seeding writes memory directly; its entity/summary follow-ups would only add queue noise."""

    def __enter__(self):
        from memory.services import ingest

        self._saved = ingest._enqueue_followups
        ingest._enqueue_followups = lambda **kw: None

    def __exit__(self, *exc):
        from memory.services import ingest

        ingest._enqueue_followups = self._saved


def _turn(conversation, text: str) -> tuple[float, object]:
    from coaching import services as coaching_services
    from coaching.turn import turn_run

    t = time.perf_counter()
    message, _ = coaching_services.message_receive(conversation=conversation, content=text)
    result = turn_run(message=message)
    return time.perf_counter() - t, result


def _wait(predicate, timeout: float, what: str) -> float:
    t = time.perf_counter()
    while not predicate():
        if time.perf_counter() - t > timeout:
            raise TimeoutError(f"{what} did not happen within {timeout:.0f}s")
        time.sleep(1)
    return time.perf_counter() - t


def part_b(rows: list[dict]) -> None:
    import secrets

    from django.apps import apps
    from django.conf import settings
    from django.test import override_settings

    from bloom.tests.reliability import procs
    from memory.models import ExtractionRun, Fact, Summary
    from telemetry.models import ModelCall

    if settings.DB_VENDOR != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis"):
        raise RuntimeError("part B needs DATABASE_URL=postgres://… and CELERY_BROKER_URL=redis://…")
    ApiClient = apps.get_model("identity", "ApiClient")
    Message = apps.get_model("identity", "Message")
    Turn = apps.get_model("coaching", "Turn")
    Conversation = apps.get_model("identity", "Conversation")
    think = float(os.environ.get("BENCH_REPLAY_THINK_S", "6"))
    data = json.loads(DATA.read_text())
    turns = data["conversations"][0]["turns"] + data["conversations"][1]["turns"]  # 20 learner turns
    log_dir = Path(os.environ.get("BLOOM_VAR_DIR", Path(__file__).resolve().parent.parent / "var")) / "bench-replay"
    log_dir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLOOM_TEST_", "PYTEST_"))}
    env.update({"DJANGO_SETTINGS_MODULE": "bloom.settings", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    client = ApiClient.objects.create(name=f"bench-replay-b-{secrets.token_hex(3)}")
    worker = None
    try:
        # Two learners with the same history, profile and turns. Their routing state (plans,
        # sessions) evolves alike; the OFF arm replays, turn by turn, the exact memory block the ON
        # arm's reply saw (Turn.context_snapshot), so both arms send the model the same prompts and
        # the only difference left is the extraction running in the worker.
        on_learner, on_conv = _replay_learner(client, "on")
        _off_learner, off_conv = _replay_learner(client, "off")
        warm_conv = Conversation.objects.create(learner=_off_learner)
        with override_settings(BLOOM_MEMORY_EXTRACTION=False):
            _turn(warm_conv, "Hello!")  # warm the in-process model (not measured); nothing queued
        worker = procs.worker(env, log_dir, "bench-replay-worker")
        time.sleep(8)  # worker start-up (imports, model load happens on its first task)

        latencies: dict[str, list[float]] = {"on": [], "off": []}
        traces: dict[str, list[str]] = {"on": [], "off": []}
        model_ms: dict[str, list[float]] = {"on": [], "off": []}
        replies: dict[str, list[str]] = {"on": [], "off": []}
        snapshots: list[str] = []
        started = time.time()

        def settled(ids: list[int]) -> bool:
            # A message is settled when extraction recorded a run, or its output was malformed (a
            # parse_error row, nothing written; the task does not retry those).
            parse_errors = ModelCall.objects.filter(service="memory.extract_facts", status="parse_error",
                                                    learner_id=on_learner.pk, created_at__gte=_aware(started))
            return ExtractionRun.objects.filter(message_id__in=ids).count() + parse_errors.count() >= len(ids)

        def on_messages() -> list[int]:
            return list(Message.objects.filter(conversation=on_conv, role="learner").values_list("pk", flat=True))

        import coaching.turn.run as engine

        real_context_for = engine.context_for
        drain_between = []
        try:
            for arm, first in (("on", 0), ("off", 0), ("on", 10), ("off", 10)):
                conv = on_conv if arm == "on" else off_conv
                with override_settings(BLOOM_MEMORY_EXTRACTION=(arm == "on")):
                    for i in range(first, first + 10):
                        if arm == "off":
                            engine.context_for = lambda learner, snapshot=snapshots[i]: snapshot
                        seconds, result = _turn(conv, turns[i])
                        latencies[arm].append(seconds)
                        traces[arm].append(result.reply.trace_id)
                        replies[arm].append(result.reply.content)
                        turn = Turn.objects.get(reply=result.reply)
                        model_ms[arm].append(float(turn.timings.get("model", 0.0)))
                        if arm == "on":
                            snapshots.append(turn.context_snapshot)
                        time.sleep(think)
                engine.context_for = real_context_for
                if arm == "on":
                    # The ON block's backlog is finished before the OFF block starts, so nothing
                    # extracts while OFF is measured (this wait is not reply latency).
                    drain_between.append(_wait(lambda: settled(on_messages()), 1800, "extraction of the ON arm"))
        finally:
            engine.context_for = real_context_for
        on_ids = on_messages()
        drained = drain_between[-1]
        same_replies = sum(a == b for a, b in zip(replies["on"], replies["off"], strict=True))

        def prompt_tokens(arm: str) -> float:
            values = list(ModelCall.objects.filter(trace_id__in=traces[arm], operation="chat", status="ok",
                                                   service="coaching.turn")
                          .values_list("input_tokens", flat=True))
            return statistics.mean(v for v in values if v is not None) if values else float("nan")

        background = ModelCall.objects.filter(created_at__gte=_aware(started),
                                              extra__priority="background")
        preempted = background.filter(status="preempted").count()
        background_ok = background.filter(status="ok").count()
        try:
            waited = _wait(lambda: Summary.objects.filter(learner=on_learner).count() > 1, 900, "a summary")
            summary_wait = f"{waited:.0f} s"
        except TimeoutError:
            summary_wait = "none within 900 s"
        facts_first = Fact.objects.filter(learner=on_learner, source_message__isnull=False).count()
        summaries = Summary.objects.filter(learner=on_learner).count() - 1  # minus the seeded one

        # Replay the same 20 turns' extraction (same text, new messages) — no duplicate facts.
        from django.db import transaction

        from core.outbox.services import outbox_enqueue

        replay_ids = []
        for i, text in enumerate(turns):
            with transaction.atomic():
                msg = Message.objects.create(conversation=on_conv, role="learner", content=text, status="answered")
                outbox_enqueue(task_name="memory.extract_facts", args=[msg.pk], queue="memory",
                               dedup_key=f"bench-replay-again:{msg.pk}:{i}")
            replay_ids.append(msg.pk)
        _wait(lambda: settled(on_ids + replay_ids), 1800, "extraction of the replay")
        facts_second = Fact.objects.filter(learner=on_learner, source_message__isnull=False).count()
        from memory.vectors import cosine

        earlier = list(Fact.objects.filter(learner=on_learner).exclude(source_message_id__in=replay_ids))
        for fact in Fact.objects.filter(learner=on_learner, source_message_id__in=replay_ids):
            best = max(earlier, key=lambda e: cosine(e.embedding, fact.embedding))
            similarity = cosine(best.embedding, fact.embedding)
            print(f"# replay new fact: {fact.content!r} | nearest earlier ({similarity:.2f}): {best.content!r}",
                  file=sys.stderr)
        runs = ExtractionRun.objects.filter(message_id__in=replay_ids)

        mean_on, mean_off = statistics.mean(latencies["on"]), statistics.mean(latencies["off"])
        p50_on, p50_off = statistics.median(latencies["on"]), statistics.median(latencies["off"])
        model_on, model_off = statistics.mean(model_ms["on"]), statistics.mean(model_ms["off"])
        bench = "memory.replay"
        parse_errors = ModelCall.objects.filter(service="memory.extract_facts", status="parse_error",
                                                learner_id=on_learner.pk, created_at__gte=_aware(started)).count()
        rows += [
            {"bench": bench, "metric": "reply latency mean, extraction off", "value": mean_off, "unit": "s",
             "note": f"20 turns, p50 {p50_off:.2f} s"},
            {"bench": bench, "metric": "reply latency mean, extraction on", "value": mean_on, "unit": "s",
             "note": f"20 turns, p50 {p50_on:.2f} s; real worker process extracting meanwhile"},
            {"bench": bench, "metric": "ratio on/off (mean)", "value": mean_on / mean_off, "unit": "×",
             "note": f"p50 ratio {p50_on / p50_off:.3f}; target < 1.05; think time {think:.0f} s"},
            {"bench": bench, "metric": "model time mean on / off", "value": model_on / model_off, "unit": "×",
             "note": f"{model_on:.0f} ms vs {model_off:.0f} ms"},
            {"bench": bench, "metric": "identical replies on vs off", "value": same_replies, "unit": "of 20",
             "note": "same prompts (OFF replays ON's memory block), seed 7"},
            {"bench": bench, "metric": "prompt tokens per reply call on / off", "value":
             prompt_tokens("on") / prompt_tokens("off"), "unit": "×",
             "note": f"{prompt_tokens('on'):.0f} vs {prompt_tokens('off'):.0f}"},
            {"bench": bench, "metric": "background calls preempted by a turn", "value": preempted, "unit": "",
             "note": f"{background_ok} background calls completed"},
            {"bench": bench, "metric": "facts extracted (ON learner)", "value": facts_first, "unit": "",
             "note": f"{len(on_ids)} turns ({parse_errors} parse_error in all); backlog drained "
                     f"{drain_between[0]:.0f} s / {drained:.0f} s after the ON blocks; 12 seeded facts besides"},
            {"bench": bench, "metric": "summaries after the threshold", "value": summaries, "unit": "",
             "note": f"threshold {settings.BLOOM_SUMMARY_THRESHOLD}; first one after the drain: {summary_wait}"},
            {"bench": bench, "metric": "new facts on replaying the 20 turns", "value": facts_second - facts_first,
             "unit": "", "note": f"strengthened {sum(r.strengthened for r in runs)}, exact duplicates dropped "
                                 f"{sum(r.duplicates for r in runs)}"},
        ]
        for arm in ("off", "on"):
            print(f"# replay {arm}: " + " ".join(f"{x:.2f}" for x in latencies[arm]), file=sys.stderr)
    finally:
        if worker is not None:
            worker.stop()
        Fact.objects.filter(learner__client=client).delete()
        client.delete()


def _aware(epoch: float):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, tz=UTC)


def run(quick: bool) -> list[dict]:
    rows: list[dict] = []
    part_a(rows, n=60 if quick else 150)
    if not quick:
        part_b(rows)
    return rows
