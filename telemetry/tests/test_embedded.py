"""The SQLite path (embedded default): percentiles are computed in Python there."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection

from telemetry import selectors
from telemetry.tests.factories import make_call

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def test_aggregates_and_timeseries_on_sqlite():
    assert connection.vendor == "sqlite"
    for ms, status in ((100, "ok"), (200, "ok"), (300, "error"), (400, "ok")):
        make_call(request_model="m", duration_s=ms / 1000, status=status)
    make_call(request_model="m-background", duration_s=0.1, status="preempted")
    group, background = selectors.call_aggregates(window=timedelta(hours=1))
    assert (group["count"], group["errors"], group["error_rate"]) == (4, 1, 0.25)
    assert (background["errors"], background["preempted"]) == (0, 1)
    assert group["p50_ms"] == pytest.approx(250.0) and group["p95_ms"] == pytest.approx(385.0)
    series = selectors.call_timeseries(window=timedelta(hours=2))
    assert sum(r["count"] for r in series) == 5


def test_content_stored_by_default_in_embedded_mode():
    row = make_call(response="visible in the demo")
    row.refresh_from_db()
    assert row.response_content == "visible in the demo"
