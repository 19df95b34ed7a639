from __future__ import annotations

import time

import pytest

from telemetry.tests.factories import make_call

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(client, django_user_model):
    user = django_user_model.objects.create_superuser("root", "r@example.org", "pw-root-123")
    client.force_login(user)
    return client


def test_changelist_trace_and_chart(admin_client_):
    now = time.time()
    for i in range(3):
        make_call(trace_id="trace-xyz", loop_iteration=i, agent="coach", started_at=now + i,
                  request_model="qwen<script>")
    listing = admin_client_.get("/admin/telemetry/modelcall/")
    assert listing.status_code == 200 and b"trace-xy" in listing.content
    trace = admin_client_.get("/admin/telemetry/modelcall/trace/trace-xyz/")
    assert trace.status_code == 200 and trace.content.count(b"<tr>") >= 4
    chart = admin_client_.get("/admin/telemetry/modelcall/chart/?window=24h")
    assert chart.status_code == 200 and b"<svg" in chart.content and b"<circle" in chart.content
    assert b"qwen<script>" not in chart.content  # model names are escaped inside the SVG
    assert admin_client_.get("/admin/telemetry/modelcall/add/").status_code == 403
