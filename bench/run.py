#!/usr/bin/env python
"""Run every benchmark in bench/ and print one table.

Each `bench/bench_*.py` module exposes `run(quick: bool) -> list[dict]`, each dict a row with
keys: bench, metric, value, unit, and optionally note. Usage:
    python bench/run.py            # all benchmarks
    python bench/run.py telemetry  # only modules whose name contains 'telemetry'
    python bench/run.py memory     # a bench's whole name: that bench alone (not memory_load too)
    python bench/run.py --quick    # smaller sizes
    python bench/run.py --json out.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bloom.settings")


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def format_value(value) -> str:
    if isinstance(value, float):
        if value == 0 or abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    return str(value)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("filters", nargs="*")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()

    import django

    django.setup()
    server = embedded_model_server()
    try:
        return run_benches(args)
    finally:
        if server is not None:
            server.stop()


def embedded_model_server():
    """Benchmarks use the configured chat model. When that is the embedded model server and none
    is running, start one for this run (as `make run` would), so every bench measures the same
    runtime as production."""
    from django.conf import settings

    from bloom.tests.reliability import procs
    from core.env import DEFAULT_MODEL_SERVER_URL

    if settings.BLOOM_LLM.provider != "openai" or settings.OPENAI_BASE_URL != DEFAULT_MODEL_SERVER_URL:
        return None
    port = int(DEFAULT_MODEL_SERVER_URL.rsplit(":", 1)[1].split("/")[0])
    if procs.port_open(port):
        return None
    import tempfile

    print(f"# starting the embedded model server on port {port} for this run", file=sys.stderr, flush=True)
    return procs.model_server({**os.environ, "LOG_LEVEL": "WARNING"}, port, Path(tempfile.mkdtemp(prefix="bench-")))


def run_benches(args) -> int:
    rows: list[dict] = []
    failed = 0
    paths = sorted((ROOT / "bench").glob("bench_*.py"))
    names = {p.stem.removeprefix("bench_") for p in paths}
    for path in paths:
        # A filter that is a bench's whole name selects that bench alone ("memory" is not also
        # memory_load); any other filter selects every bench whose name contains it ("memory_").
        name = path.stem.removeprefix("bench_")
        if args.filters and not any(f == name if f in names else f in name for f in args.filters):
            continue
        started = time.perf_counter()
        print(f"# {path.stem} ...", file=sys.stderr, flush=True)
        try:
            rows.extend(load(path).run(quick=args.quick))
        except Exception:
            failed += 1
            traceback.print_exc()
            rows.append({"bench": path.stem, "metric": "FAILED", "value": "see stderr", "unit": ""})
        print(f"# {path.stem} done in {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)

    widths = [max(len(h), *(len(str(r.get(k, ""))) if k != "value" else len(format_value(r["value"]))
                           for r in rows)) if rows else len(h)
              for h, k in (("bench", "bench"), ("metric", "metric"), ("value", "value"), ("unit", "unit"))]
    header = ("bench", "metric", "value", "unit", "note")
    line = "  ".join(h.ljust(w) for h, w in zip(header[:4], widths, strict=False)) + "  note"
    print(line)
    print("-" * len(line))
    for r in rows:
        cells = [str(r["bench"]), str(r["metric"]), format_value(r["value"]), str(r.get("unit", ""))]
        padded = (c.ljust(w) if i != 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False)))
        print("  ".join(padded)
              + "  " + str(r.get("note", "")))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
