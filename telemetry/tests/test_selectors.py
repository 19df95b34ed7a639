from __future__ import annotations

import random
import time
from datetime import timedelta

import pytest

from core.errors import ApplicationError
from telemetry import selectors
from telemetry.selectors import parse_window, percentile
from telemetry.tests.factories import make_call

pytestmark = pytest.mark.django_db


def test_parse_window():
    assert parse_window("30m") == timedelta(minutes=30)
    assert parse_window("7d") == timedelta(days=7)
    for bad in ("", "0h", "1w", "abc", "-1h"):
        with pytest.raises(ApplicationError):
            parse_window(bad)


def test_python_percentile_matches_definition():
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([10.0], 0.95) == 10.0
    assert percentile([], 0.5) is None


def test_aggregates_per_model_and_operation():
    rng = random.Random(1)
    durations = [rng.uniform(10, 500) for _ in range(40)]
    for i, d in enumerate(durations):
        make_call(request_model="m1", duration_s=d / 1000, status="error" if i % 10 == 0 else "ok",
                  input_tokens=3, output_tokens=2)
    make_call(request_model="m2", operation="embeddings", duration_s=0.05, input_tokens=None, output_tokens=None)
    make_call(request_model="m1", started_at=time.time() - 3 * 3600)  # outside a 1h window
    groups = {(g["request_model"], g["operation"]): g for g in selectors.call_aggregates(window=timedelta(hours=1))}
    assert set(groups) == {("m1", "chat"), ("m2", "embeddings")}
    g = groups[("m1", "chat")]
    assert (g["count"], g["errors"], g["input_tokens"], g["output_tokens"]) == (40, 4, 120, 80)
    assert g["error_rate"] == pytest.approx(0.1)
    ordered = sorted(durations)
    for q in (0.5, 0.95, 0.99):
        assert g[f"p{int(q * 100)}_ms"] == pytest.approx(percentile(ordered, q), rel=1e-6)
    assert groups[("m2", "embeddings")]["input_tokens"] == 0


def test_preempted_background_calls_are_counted_apart_from_errors():
    for status in ("ok", "preempted", "preempted", "error"):
        make_call(request_model="m3", status=status)
    (g,) = [g for g in selectors.call_aggregates(window=timedelta(hours=1)) if g["request_model"] == "m3"]
    assert (g["count"], g["errors"], g["preempted"]) == (4, 1, 2)


def test_list_filters():
    a = make_call(operation="chat", status="ok", learner_id=1, trace_id="ta")
    b = make_call(operation="judge", status="timeout", learner_id=2, trace_id="tb", request_model="judge-m")
    ids = lambda qs: {c.call_id for c in qs}  # noqa: E731
    assert ids(selectors.model_call_list(operation="judge")) == {b.call_id}
    assert ids(selectors.model_call_list(status="ok")) == {a.call_id}
    assert ids(selectors.model_call_list(learner_id=1)) == {a.call_id}
    assert ids(selectors.model_call_list(trace_id="tb")) == {b.call_id}
    assert ids(selectors.model_call_list(model="judge-m")) == {b.call_id}
    with pytest.raises(ApplicationError):
        selectors.model_call_list(status="exploded")


def test_trace_tree_nests_children_in_order():
    now = time.time()
    root = make_call(trace_id="T", started_at=now)
    child1 = make_call(trace_id="T", parent_call_id=root.call_id, loop_iteration=0, started_at=now + 1)
    child2 = make_call(trace_id="T", parent_call_id=root.call_id, loop_iteration=1, started_at=now + 2)
    orphan = make_call(trace_id="T", parent_call_id="not-in-trace", started_at=now + 3)
    tree = selectors.trace_tree(trace_id="T")
    assert [n["call"].call_id for n in tree] == [root.call_id, orphan.call_id]
    assert [n["call"].call_id for n in tree[0]["children"]] == [child1.call_id, child2.call_id]


def test_timeseries_buckets_per_model():
    now = time.time()
    for d in (0.1, 0.2, 0.3):
        make_call(request_model="m1", duration_s=d, started_at=now)
    rows = selectors.call_timeseries(window=timedelta(hours=2))
    assert len(rows) in (1, 2)  # the calls may straddle an hour boundary
    assert sum(r["count"] for r in rows) == 3 and all(r["p95_ms"] >= r["p50_ms"] for r in rows)
