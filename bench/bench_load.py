"""Load on loopback: chat turns with the embedded model and memory search at 1, 8 and 32 concurrent
clients, then a reconciliation (no turn and no fact lost).

The stack is real and local: uvicorn (bloom.asgi) on 127.0.0.1 with a free port, one Celery worker
and the outbox relay as subprocesses, a dedicated redis-server on its own port, PostgreSQL from
DATABASE_URL, the embedded llama.cpp model inside the web process (and the worker, for extraction).
The client is a bounded asyncio/httpx loop: each of N clients has its own learner and conversation
and sends one request after another for a fixed window; requests still in flight when the window
closes are awaited (bounded) and counted. Throughput = requests completed / time until the last
one finished (a turn can outlast the window).

A 503 with Retry-After (model unavailable / breaker open) is a defined outcome under overload and
is reported separately from errors; anything else non-2xx is an error.

Run: `python bench/run.py load` (or `--quick` for short windows). On 2 cores chat turns queue:
under ASGI each request runs its sync view in its own thread (and holds its own database
connection while it waits), and the in-process model serves one turn at a time in arrival order
(`FairLock`), so latency grows with concurrency while throughput stays that of one model; that is
measured, not hidden. A turn waits at most BLOOM_LLM_QUEUE_TIMEOUT (180 s) for the model.
`bench/locustfile.py` drives the same endpoints with locust for manual runs."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHAT_TEXTS = [
    "I practised my scales for twenty minutes today and it felt good.",
    "I prefer studying in the morning before work.",
    "What should I focus on next?",
    "My barrier is that I get tired in the evenings.",
    "Any tips for remembering vocabulary?",
]
SEARCH_QUERIES = ["morning practice", "tired evenings", "vocabulary tips", "scales", "focus next week"]
SEED_FACTS = [
    "Prefers to study in the morning before work.", "Gets tired in the evenings after work.",
    "Practises scales for twenty minutes a day.", "Wants to pass the B1 exam in June.",
    "Finds flashcards helpful for vocabulary.", "Skipped two sessions last week because of travel.",
    "Enjoys podcasts during the commute.", "Has a weekly lesson with a tutor on Thursdays.",
]


def _p(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def _phase(base: str, tokens: list[str], targets: list[str], *, kind: str, window: float,
                 drain: float) -> dict:
    import httpx

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    in_window = 0
    last_done = 0.0
    started = time.monotonic()
    stop_at = started + window

    async def one_client(i: int) -> None:
        nonlocal in_window, last_done
        headers = {"Authorization": f"Bearer {tokens[i]}"}
        async with httpx.AsyncClient(base_url=base, timeout=window + drain, headers=headers) as client:
            n = 0
            while time.monotonic() < stop_at:
                t0 = time.monotonic()
                try:
                    if kind == "chat":
                        r = await client.post(targets[i], json={"content": CHAT_TEXTS[(i + n) % len(CHAT_TEXTS)]},
                                              headers={"Idempotency-Key": secrets.token_hex(8)})
                    else:
                        r = await client.get(targets[i], params={"q": SEARCH_QUERIES[(i + n) % len(SEARCH_QUERIES)]})
                    status = r.status_code
                except httpx.TimeoutException:
                    status = -1  # did not finish within window + drain
                done = time.monotonic()
                statuses[status] = statuses.get(status, 0) + 1
                if status > 0:
                    latencies.append(done - t0)
                    last_done = max(last_done, done)
                if done <= stop_at:
                    in_window += 1
                n += 1

    await asyncio.gather(*(one_client(i) for i in range(len(tokens))))
    ok = (201, 200)
    return {"latencies": latencies, "statuses": statuses, "in_window": in_window,
            "busy": max(last_done - started, 1e-9), "ok": sum(v for k, v in statuses.items() if k in ok)}


def _env(db_url: str, broker: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLOOM_TEST_", "PYTEST_"))}
    env.update({"DJANGO_SETTINGS_MODULE": "bloom.settings", "DATABASE_URL": db_url, "CELERY_BROKER_URL": broker,
                "DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "127.0.0.1",
                "SECURE_SSL_REDIRECT": "0", "BLOOM_THROTTLE_RATE": "100000/min", "LOG_LEVEL": "WARNING",
                "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    return env


def run(quick: bool) -> list[dict]:
    import httpx
    from django.db import close_old_connections

    from bloom.tests.reliability import procs

    levels = (1, 8, 32)
    window = 12.0 if quick else 25.0
    drain = 180.0
    search_window = 6.0 if quick else 15.0
    reconcile_timeout = 300.0 if quick else 900.0
    db_url = os.environ.get("DATABASE_URL", "")
    if not db_url.startswith("postgres"):
        raise RuntimeError("bench_load needs DATABASE_URL=postgres://… (make bench sets it)")
    log_dir = Path(os.environ.get("BLOOM_VAR_DIR", ROOT / "var")) / "bench-load-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    for old in log_dir.glob("*.log"):
        old.unlink()
    redis = procs.RedisInstance(procs.free_port(), log_dir)
    port = procs.free_port()
    env = _env(db_url, redis.url)
    base = f"http://127.0.0.1:{port}"
    rows: list[dict] = []
    started: list = []

    def row(metric, value, unit, note=""):
        rows.append({"bench": "load", "metric": metric, "value": value, "unit": unit, "note": note})

    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True,
                       timeout=600)
        redis.start()
        web = procs.web(env, port, log_dir, name="bench-web")
        started += [web, procs.worker(env, log_dir, "bench-worker"), procs.relay(env, log_dir)]


        from core.identity import services as identity_services
        client = identity_services.api_client_create(name=f"bench-load-{secrets.token_hex(3)}")
        tokens, conv_urls, search_urls, learner_ids = [], [], [], []
        http = httpx.Client(base_url=base, timeout=300)
        for i in range(max(levels)):
            _, raw = identity_services.api_token_create(client=client, name=f"c{i}")
            h = {"Authorization": f"Bearer {raw}"}
            created = http.post("/api/v1/learners", json={"display_name": f"load {i}"}, headers=h)
            created.raise_for_status()
            rid = created.json()["id"]  # the API's learner id is the pseudonymous research_id
            r = http.patch(f"/api/v1/learners/{rid}/profile", headers=h,
                           json={"primary_goal": "learn Portuguese", "goal_category": "language",
                                 "weekly_hours": 3, "best_time": "morning", "confidence": 6})
            r.raise_for_status()
            conv = http.post(f"/api/v1/learners/{rid}/conversations", headers=h)
            conv.raise_for_status()
            conv = conv.json()
            tokens.append(raw)
            conv_urls.append(f"/api/v1/conversations/{conv['id']}/messages")
            from coaching.models import Learner

            pk = Learner.objects.get(research_id=rid).pk
            learner_ids.append(pk)
            search_urls.append(f"/api/v1/memory/learners/{rid}/search")
            if i < 8:  # seed search data (embedded by the web process)
                http.post(f"/api/v1/memory/learners/{rid}/facts", headers=h,
                          json={"facts": [{"fact_type": "insight", "content": t} for t in SEED_FACTS]}
                          ).raise_for_status()
        # warm the model and the encoder once (not measured)
        http.post(conv_urls[-1], json={"content": "hello"}, headers={"Authorization": f"Bearer {tokens[-1]}"})
        http.get(search_urls[0], params={"q": "warm"}, headers={"Authorization": f"Bearer {tokens[0]}"})
        http.close()

        for kind, w in (("search", search_window), ("chat", window)):
            for n in levels:
                targets = (conv_urls if kind == "chat" else [search_urls[i % 8] for i in range(n)])[:n]
                # search clients reuse the seeded learners, each with its own token of the same client
                res = asyncio.run(_phase(base, tokens[:n], targets, kind=kind, window=w, drain=drain))
                lat = res["latencies"]
                unit_scale, unit = (1000.0, "ms") if kind == "search" else (1.0, "s")
                s503 = res["statuses"].get(503, 0)
                errors = sum(v for k, v in res["statuses"].items() if k not in (200, 201, 503))
                # Completed requests over the time until the last one finished: with turns longer
                # than the window, "completed inside the window" would read 0 and hide the rate.
                row(f"{kind}_c{n}_throughput", res["ok"] / res["busy"], "req/s",
                    f"{res['ok']} ok in {res['busy']:.0f}s ({res['in_window']} inside the {w:.0f}s window)")
                print(f"# load: {kind} c={n} done: {dict(res['statuses'])}", file=sys.stderr, flush=True)
                row(f"{kind}_c{n}_p50", _p(lat, 0.5) * unit_scale, unit)
                row(f"{kind}_c{n}_p95", _p(lat, 0.95) * unit_scale, unit)
                row(f"{kind}_c{n}_errors", errors, "req", f"statuses {dict(sorted(res['statuses'].items()))}")
                if s503:
                    row(f"{kind}_c{n}_503_retry_after", s503, "req", "defined overload outcome")

        # reconciliation ----------------------------------------------------------------------------
        from coaching.models import Message, MessageStatus, Role
        from core.outbox.models import OutboxMessage
        from memory.models import ExtractionRun, Fact
        from telemetry.models import ModelCall

        close_old_connections()
        msgs = Message.objects.filter(conversation__learner__client=client)
        keys = [f"extract:{pk}" for pk in msgs.filter(role=Role.LEARNER).values_list("pk", flat=True)]
        t0 = time.monotonic()

        def settled() -> bool:
            pending = OutboxMessage.objects.filter(dedup_key__in=keys, sent_at__isnull=True).exists()
            answered = msgs.filter(role=Role.LEARNER, status=MessageStatus.ANSWERED).values_list("pk", flat=True)
            done = ExtractionRun.objects.filter(message_id__in=list(answered)).count()
            parse_err = ModelCall.objects.filter(service="memory.extract_facts", status="parse_error",
                                                 learner_id__in=learner_ids).count()
            return not pending and done + parse_err >= len(answered)

        try:
            procs.wait_until(settled, timeout=reconcile_timeout, what="extraction to catch up", interval=2)
            drained = True
        except TimeoutError:
            drained = False
        learner_in = msgs.filter(role=Role.LEARNER).count()
        replies = msgs.filter(role=Role.COACH, reply_to__isnull=False).count()
        unanswered = msgs.filter(role=Role.LEARNER, status=MessageStatus.UNANSWERED).count()
        pending_msgs = msgs.filter(role=Role.LEARNER, status=MessageStatus.PENDING).count()
        runs = ExtractionRun.objects.filter(learner_id__in=learner_ids)
        facts_expected = sum(runs.values_list("created", flat=True))
        facts_stored = Fact.objects.filter(learner_id__in=learner_ids, source_message__isnull=False).count()
        parse_errors = ModelCall.objects.filter(service="memory.extract_facts", status="parse_error",
                                                learner_id__in=learner_ids).count()
        row("reconcile_messages_in", learner_in, "msg", f"= replies {replies} + unanswered {unanswered}"
            f" + pending {pending_msgs}: {'OK' if learner_in == replies + unanswered + pending_msgs else 'MISMATCH'}")
        row("reconcile_outbox_pending", OutboxMessage.objects.filter(dedup_key__in=keys, sent_at__isnull=True).count(),
            "rows")
        row("reconcile_extractions", runs.count(), "runs",
            f"{parse_errors} parse_error; answered {replies}; caught up: {drained} "
            f"after {time.monotonic() - t0:.0f}s")
        row("reconcile_facts", facts_stored, "facts",
            f"expected {facts_expected}: {'OK' if facts_stored == facts_expected else 'MISMATCH'}")
        background = ModelCall.objects.filter(learner_id__in=learner_ids, extra__priority="background")
        row("background_preempted", background.filter(status="preempted").count(), "calls",
            f"extraction/summary generations that stepped aside for a turn; {background.filter(status='ok').count()}"
            " completed")
    finally:
        procs.stop_all(*started)
        if redis.proc.alive:
            redis.proc.stop()
    return rows
