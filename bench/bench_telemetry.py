"""Telemetry benchmarks (run on PostgreSQL for the numbers that matter):

- recording overhead per call: median µs of a call through the facade to the scripted FAKE chat
  provider (no model time, so the layer's own cost is visible) with the recorder off, on
  (synchronous INSERT) and on in buffered mode (BLOOM_TELEMETRY_ASYNC), interleaved in blocks
  in the same run;
- bulk ingest rate: rows/s for `telemetry_record_calls` (bulk_create) and for one INSERT per call
  (the recorder's path).
Rows written here carry trace ids starting with "bench-" and are deleted afterwards."""

from __future__ import annotations

import statistics
import time
import uuid


def _records(n: int, trace: str):
    from core.llm.context import CallContext
    from core.llm.observers import CallRecord

    now = time.time()
    ctx = CallContext(trace_id=trace, learner_id=1, agent="bench", service="bench")
    return [CallRecord(call_id=uuid.uuid4().hex, operation="chat", provider="fake", request_model="bench",
                       context=ctx, started_at=now + i * 1e-3, response_model="bench", input_tokens=50,
                       output_tokens=20, duration_s=0.5, status="ok", prompt="p", response="r")
            for i in range(n)]


def run(quick: bool) -> list[dict]:
    from django.conf import settings
    from django.db import connection
    from django.test import override_settings

    from core import llm
    from core.env import ModelSpec
    from core.llm.providers import fake_chat
    from core.llm.providers.fake import Scripted
    from telemetry.models import ModelCall
    from telemetry.recorder import recorder
    from telemetry.services import telemetry_record_call, telemetry_record_calls

    vendor = connection.vendor
    note = f"{vendor}; content={'on' if settings.BLOOM_TELEMETRY_CONTENT else 'off'}"
    rows: list[dict] = []
    trace = f"bench-{uuid.uuid4().hex[:8]}"
    fake = fake_chat()
    fake.reset()
    fake.default = lambda request: Scripted(text="ok", input_tokens=5, output_tokens=1)
    blocks, per_block = (6, 50) if quick else (18, 100)
    modes = ("off", "sync", "buffered")
    timings: dict[str, list[float]] = {m: [] for m in modes}
    messages = [{"role": "user", "content": "hello"}]
    try:
        with override_settings(BLOOM_LLM=ModelSpec("fake", "bench")), llm.call_context(trace_id=trace):
            for _ in range(20):  # warm up imports, connection, caches
                llm.chat(messages)
            for block in range(blocks):
                mode = modes[block % 3]
                if mode == "off":
                    llm.unregister_observer(recorder)
                else:
                    llm.register_observer(recorder)
                with override_settings(BLOOM_TELEMETRY_ASYNC=mode == "buffered"):
                    for _ in range(per_block):
                        t0 = time.perf_counter_ns()
                        llm.chat(messages)
                        timings[mode].append((time.perf_counter_ns() - t0) / 1000)
                    recorder.flush()
        llm.register_observer(recorder)
        med = {m: statistics.median(timings[m]) for m in modes}
        n = len(timings["off"])
        rows += [
            {"bench": "telemetry", "metric": "call median, recorder off", "value": med["off"], "unit": "µs",
             "note": f"fake provider, n={n}; {note}"},
            {"bench": "telemetry", "metric": "call median, recorder sync", "value": med["sync"], "unit": "µs",
             "note": f"fake provider, n={n}"},
            {"bench": "telemetry", "metric": "call median, recorder buffered", "value": med["buffered"],
             "unit": "µs", "note": f"fake provider, n={n}, BLOOM_TELEMETRY_ASYNC"},
            {"bench": "telemetry", "metric": "recording overhead, sync", "value": med["sync"] - med["off"],
             "unit": "µs", "note": "one INSERT per call, synchronous_commit off"},
            {"bench": "telemetry", "metric": "recording overhead, buffered",
             "value": med["buffered"] - med["off"], "unit": "µs", "note": "queue put; writer thread bulk-inserts"},
        ]

        n_bulk = 2_000 if quick else 20_000
        records = _records(n_bulk, trace)
        t0 = time.perf_counter()
        telemetry_record_calls(records=records)
        bulk = n_bulk / (time.perf_counter() - t0)
        n_single = 300 if quick else 2_000
        singles = _records(n_single, trace)
        t0 = time.perf_counter()
        for record in singles:
            telemetry_record_call(record=record)
        single = n_single / (time.perf_counter() - t0)
        rows += [
            {"bench": "telemetry", "metric": "bulk ingest", "value": bulk, "unit": "rows/s",
             "note": f"bulk_create batches of 1000, n={n_bulk}; {vendor}"},
            {"bench": "telemetry", "metric": "per-call ingest", "value": single, "unit": "rows/s",
             "note": f"one INSERT per call (recorder path), n={n_single}; {vendor}"},
        ]
    finally:
        fake.reset()
        llm.register_observer(recorder)
        ModelCall.objects.filter(trace_id=trace).delete()
    return rows
