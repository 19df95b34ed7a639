"""Reads of telemetry. Filtering and aggregation live here only. Percentiles are computed in SQL
on PostgreSQL (`percentile_cont`) and in Python on SQLite, which has no such aggregate."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Aggregate, Count, F, FloatField, Q, QuerySet, Sum
from django.db.models.functions import TruncDay, TruncHour
from django.utils import timezone

from core.errors import ApplicationError
from telemetry.models import ModelCall

WINDOW_RE = re.compile(r"^(\d{1,4})([mhd])$")
WINDOW_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
PERCENTILES = (0.5, 0.95, 0.99)


class PercentileCont(Aggregate):
    function = "percentile_cont"
    template = "%(function)s(%(percentile)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression, percentile: float, **extra):
        super().__init__(expression, percentile=float(percentile), **extra)


def parse_window(raw: str) -> timedelta:
    match = WINDOW_RE.match((raw or "").strip())
    if not match or int(match.group(1)) == 0:
        raise ApplicationError("window must look like 30m, 24h or 7d", field="window")
    return timedelta(**{WINDOW_UNITS[match.group(2)]: int(match.group(1))})


def model_call_list(*, operation: str = "", model: str = "", status: str = "", learner_id: int | None = None,
                    trace_id: str = "", since: datetime | None = None, until: datetime | None = None,
                    agent: str = "") -> QuerySet[ModelCall]:
    qs = ModelCall.objects.all()
    if operation:
        qs = qs.filter(operation=operation)
    if model:
        qs = qs.filter(Q(request_model=model) | Q(response_model=model))
    if status:
        if status not in ModelCall.Status.values:
            raise ApplicationError(f"status must be one of {', '.join(ModelCall.Status.values)}", field="status")
        qs = qs.filter(status=status)
    if learner_id is not None:
        qs = qs.filter(learner_id=learner_id)
    if trace_id:
        qs = qs.filter(trace_id=trace_id)
    if agent:
        qs = qs.filter(agent=agent)
    if since is not None:
        qs = qs.filter(created_at__gte=since)
    if until is not None:
        qs = qs.filter(created_at__lt=until)
    return qs.order_by("-created_at", "-id")


def trace_calls(*, trace_id: str) -> list[ModelCall]:
    """Calls of one trace in the order they started (loop iterations in order)."""
    return list(ModelCall.objects.filter(trace_id=trace_id).order_by("created_at", "id"))


def trace_tree(*, trace_id: str) -> list[dict[str, Any]]:
    """Roots (calls whose parent is not in the trace), each with nested `children`, in order."""
    calls = trace_calls(trace_id=trace_id)
    nodes: dict[str, dict[str, Any]] = {c.call_id: {"call": c, "children": []} for c in calls}
    roots: list[dict[str, Any]] = []
    for call in calls:
        parent = nodes.get(call.parent_call_id) if call.parent_call_id else None
        (parent["children"] if parent and parent["call"] is not call else roots).append(nodes[call.call_id])
    return roots


def percentile(sorted_values: list[float], q: float) -> float | None:
    """Linear interpolation, the same definition as PostgreSQL's percentile_cont."""
    if not sorted_values:
        return None
    pos = (len(sorted_values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _finish_group(row: dict[str, Any]) -> dict[str, Any]:
    row["error_rate"] = (row["errors"] / row["count"]) if row["count"] else 0.0
    return row


def call_aggregates(*, window: timedelta, now: datetime | None = None) -> list[dict[str, Any]]:
    """Per (model, operation) over the window: count, errors, error rate, p50/p95/p99 duration
    (ms), tokens in and out."""
    since = (now or timezone.now()) - window
    qs = ModelCall.objects.filter(created_at__gte=since)
    # A preempted background generation stepped aside on purpose (core.llm.priority): counted on its
    # own, not as an error.
    not_errors = (ModelCall.Status.OK, ModelCall.Status.PREEMPTED)
    base = {"count": Count("id"), "errors": Count("id", filter=~Q(status__in=not_errors)),
            "preempted": Count("id", filter=Q(status=ModelCall.Status.PREEMPTED)),
            "input_tokens": Sum("input_tokens"), "output_tokens": Sum("output_tokens")}
    if connection.vendor == "postgresql":
        rows = (qs.values("request_model", "operation")
                .annotate(**base, **{f"p{int(q * 100)}_ms": PercentileCont(F("duration_ms"), q) for q in PERCENTILES})
                .order_by("request_model", "operation"))
        return [_finish_group(dict(r, input_tokens=r["input_tokens"] or 0, output_tokens=r["output_tokens"] or 0))
                for r in rows]
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    durations: dict[tuple[str, str], list[float]] = defaultdict(list)
    for model, operation, status, duration, tin, tout in qs.values_list(
            "request_model", "operation", "status", "duration_ms", "input_tokens", "output_tokens").iterator():
        key = (model, operation)
        g = groups.setdefault(key, {"request_model": model, "operation": operation, "count": 0, "errors": 0,
                                    "preempted": 0, "input_tokens": 0, "output_tokens": 0})
        g["count"] += 1
        g["errors"] += status not in not_errors
        g["preempted"] += status == ModelCall.Status.PREEMPTED
        g["input_tokens"] += tin or 0
        g["output_tokens"] += tout or 0
        if duration is not None:
            durations[key].append(duration)
    out = []
    for key in sorted(groups):
        values = sorted(durations[key])
        for q in PERCENTILES:
            groups[key][f"p{int(q * 100)}_ms"] = percentile(values, q)
        out.append(_finish_group(groups[key]))
    return out


def call_timeseries(*, window: timedelta, now: datetime | None = None) -> list[dict[str, Any]]:
    """Per model and time bucket (hour for windows up to 3 days, else day): p50/p95 duration (ms),
    tokens in/out. Feeds the admin chart."""
    now = now or timezone.now()
    since = now - window
    trunc = TruncHour if window <= timedelta(days=3) else TruncDay
    qs = ModelCall.objects.filter(created_at__gte=since, duration_ms__isnull=False)
    if connection.vendor == "postgresql":
        rows = (qs.annotate(bucket=trunc("created_at")).values("request_model", "bucket")
                .annotate(count=Count("id"), p50_ms=PercentileCont(F("duration_ms"), 0.5),
                          p95_ms=PercentileCont(F("duration_ms"), 0.95),
                          input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"))
                .order_by("request_model", "bucket"))
        return [dict(r, input_tokens=r["input_tokens"] or 0, output_tokens=r["output_tokens"] or 0) for r in rows]
    buckets: dict[tuple[str, datetime], dict[str, Any]] = {}
    values: dict[tuple[str, datetime], list[float]] = defaultdict(list)
    for model, bucket, duration, tin, tout in qs.annotate(bucket=trunc("created_at")).values_list(
            "request_model", "bucket", "duration_ms", "input_tokens", "output_tokens").iterator():
        key = (model, bucket)
        b = buckets.setdefault(key, {"request_model": model, "bucket": bucket, "count": 0,
                                     "input_tokens": 0, "output_tokens": 0})
        b["count"] += 1
        b["input_tokens"] += tin or 0
        b["output_tokens"] += tout or 0
        values[key].append(duration)
    out = []
    for key in sorted(buckets):
        v = sorted(values[key])
        out.append(dict(buckets[key], p50_ms=percentile(v, 0.5), p95_ms=percentile(v, 0.95)))
    return out
