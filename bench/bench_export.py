"""Adherence export at scale: 100k participant-weeks (10,000 learners × 10 weeks; --quick: 10k).

Seeds a simulated study inside a transaction that is rolled back at the end (nothing is left in
the database), then streams the CSV export through `csv_chunks` into a byte counter, the way the
HTTP response consumes it. Reports: wall time, rows/s, time to first chunk, peak Python memory
while streaming (tracemalloc, a second pass so tracing does not distort the timing) and the RSS
growth during the timed pass. Peak memory far below the CSV size is what "streams" means here.
PostgreSQL uses a server-side cursor; SQLite fetches in batches as well."""

from __future__ import annotations

import datetime as dt
import resource
import time
import tracemalloc

from django.db import connection, transaction

BENCH = "export"


class _Rollback(Exception):
    pass


def _stream(study, exported_at) -> tuple[int, int, float]:
    from coaching.research.export import csv_chunks, export_records

    rows = 0
    size = 0
    first = None
    started = time.perf_counter()
    for i, chunk in enumerate(csv_chunks(export_records(study=study, exported_at=exported_at))):
        if i == 1:  # chunk 0 is the header, produced before the query runs
            first = time.perf_counter() - started
        size += len(chunk.encode("utf-8"))
        rows += chunk.count("\n")
    return rows - 1, size, first or 0.0


def run(quick: bool) -> list[dict]:
    from coaching.research import services
    from coaching.research.simulation import simulate

    n_learners, n_weeks = (1_000, 10) if quick else (10_000, 10)
    results: list[dict] = []
    note = f"{n_learners} learners × {n_weeks} weeks, {connection.vendor}"
    try:
        with transaction.atomic():
            started = time.perf_counter()
            study = services.study_create(
                name=f"bench-export-{time.time_ns()}", start_date=dt.date(2026, 3, 2), duration_weeks=n_weeks,
                intended_sessions_per_week=3, intended_use="three sessions a week (benchmark study)",
            )
            data = simulate(study=study, n_learners=n_learners, seed=1, use_enrollment_service=False,
                            sessions_per_week=(0, 3), messages_per_week=(0, 1), withdraw_share=0.0)
            setup = time.perf_counter() - started
            exported_at = dt.datetime(2026, 9, 1, tzinfo=dt.UTC)

            rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            started = time.perf_counter()
            rows, size, first = _stream(study, exported_at)
            elapsed = time.perf_counter() - started
            rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before

            tracemalloc.start()
            _stream(study, exported_at)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            raise _Rollback
    except _Rollback:
        pass
    results += [
        {"bench": BENCH, "metric": "participant-weeks exported", "value": rows, "unit": "rows", "note": note},
        {"bench": BENCH, "metric": "seeded sessions", "value": len(data.sessions), "unit": "rows",
         "note": f"setup {setup:.1f}s, rolled back"},
        {"bench": BENCH, "metric": "export time (CSV, streamed)", "value": round(elapsed, 2), "unit": "s",
         "note": note},
        {"bench": BENCH, "metric": "export throughput", "value": round(rows / elapsed), "unit": "rows/s", "note": note},
        {"bench": BENCH, "metric": "time to first chunk", "value": round(first * 1000, 1), "unit": "ms",
         "note": "first 500 data rows"},
        {"bench": BENCH, "metric": "CSV size", "value": round(size / 1e6, 2), "unit": "MB", "note": note},
        {"bench": BENCH, "metric": "peak Python memory while streaming", "value": round(peak / 1e6, 2),
         "unit": "MB", "note": "tracemalloc, second pass"},
        {"bench": BENCH, "metric": "RSS growth during export", "value": round(rss_growth / 1024, 1), "unit": "MB",
         "note": "ru_maxrss delta (after seeding, so a high-water mark already exists)"},
    ]
    return results
