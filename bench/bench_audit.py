"""Server time of the conversation audit page (the audit console's speed goal): a 20-turn conversation (2 model calls,
1 fact with an entity mention and a tool call per turn) rendered by Django's test client as a
superuser, i.e. URL routing + admin permission checks + the selector's queries + template
rendering, in-process (no network). Target: p95 under 300 ms, a constant number of queries.

Runs in its own throwaway database (created and dropped here), so it needs only a reachable
database server, never a migrated one, and leaves nothing behind."""

from __future__ import annotations

import os
import statistics
import time


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _measure(client, url: str, repeats: int) -> tuple[list[float], list[float], int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(3):  # warm: template loader, content types, permission caches
        assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    # Read now: the property re-slices the live log, which the next request resets.
    queries = len(ctx.captured_queries)
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        # Wall time is what a reviewer waits for; CPU time is this process's own work, which a
        # busy machine (other test runs) does not inflate.
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        assert response.status_code == 200
    return wall, cpu, queries


def run(quick: bool) -> list[dict]:
    from django.db import connection
    from django.test import Client, override_settings
    from django.urls import reverse

    repeats = 15 if quick else 40
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = "test_bloom_bench_audit"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    rows: list[dict] = []
    try:
        from evaluation.review.tests import factories

        user = factories.user(superuser=True)
        client = Client()
        client.force_login(user)
        sizes = (20,) if quick else (20, 100)
        for n_turns in sizes:
            conversation = factories.conversation_with_turns(n_turns)
            url = reverse("admin:review_conversationaudit_audit", args=[conversation.pk])
            # As served in production: no per-query debug logging.
            with override_settings(DEBUG=False):
                wall, cpu, queries = _measure(client, url, repeats)
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            note = (f"{n_turns} turns, {2 * n_turns} model calls, {repeats} requests, test client, superuser, "
                    f"load avg {load:.1f} on {os.cpu_count()} CPUs")
            rows += [
                {"bench": "audit", "metric": f"audit_page_{n_turns}_turns_median", "value": statistics.median(wall),
                 "unit": "ms", "note": note},
                {"bench": "audit", "metric": f"audit_page_{n_turns}_turns_p95", "value": _percentile(wall, 0.95),
                 "unit": "ms", "note": "wall time; target < 300 ms" if n_turns == 20 else "wall time"},
                {"bench": "audit", "metric": f"audit_page_{n_turns}_turns_cpu_median", "value": statistics.median(cpu),
                 "unit": "ms", "note": "CPU time of the request in this process"},
                {"bench": "audit", "metric": f"audit_page_{n_turns}_turns_cpu_p95", "value": _percentile(cpu, 0.95),
                 "unit": "ms", "note": "CPU time"},
                {"bench": "audit", "metric": f"audit_page_{n_turns}_turns_queries", "value": queries,
                 "unit": "queries", "note": "constant in the number of turns"},
            ]
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0, keepdb=False)
    return rows
