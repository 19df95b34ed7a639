from __future__ import annotations

import time
import uuid

import pytest
from django.contrib.auth.models import Permission

from telemetry.models import ModelCall
from telemetry.tests.factories import make_call

pytestmark = pytest.mark.django_db

CALLS = "/api/v1/telemetry/calls"


def test_staff_only(client, django_user_model):
    make_call()
    assert client.get(CALLS).status_code in (401, 403)
    user = django_user_model.objects.create_user("learner", "l@example.org", "pw-learner-123")
    client.force_login(user)
    for url in (CALLS, "/api/v1/telemetry/aggregates", "/api/v1/telemetry/traces/t-default"):
        response = client.get(url)
        assert response.status_code == 403
        assert response.json()["error"]["code"]


def test_list_with_filters(staff_client):
    make_call(operation="chat", learner_id=1)
    judge = make_call(operation="judge", status="error", error_type="LLMTimeout", learner_id=2)
    body = staff_client.get(CALLS, {"operation": "judge"}).json()
    assert [r["call_id"] for r in body["results"]] == [judge.call_id]
    # The integer key is not a learner id (the UUID filter is tested below).
    numeric = staff_client.get(CALLS, {"learner": 1})
    assert numeric.status_code == 400 and numeric.json()["error"]["field"] == "learner"
    assert staff_client.get(CALLS, {"status": "error"}).json()["results"][0]["error_type"] == "LLMTimeout"
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    assert staff_client.get(CALLS, {"since": since}).json()["count"] == 0


def test_bad_filter_is_a_clear_error(staff_client):
    response = staff_client.get(CALLS, {"status": "kaput"})
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "status"
    response = staff_client.get(CALLS, {"since": "yesterday-ish"})
    assert response.status_code == 400 and response.json()["error"]["field"] == "since"


def test_trace_tree_with_loop_index(staff_client):
    now = time.time()
    root = make_call(trace_id="turn-1", agent="coach", started_at=now)
    for i in range(3):
        make_call(trace_id="turn-1", parent_call_id=root.call_id, loop_iteration=i, started_at=now + 1 + i)
    body = staff_client.get("/api/v1/telemetry/traces/turn-1").json()
    assert body["count"] == 4
    assert [c["loop_iteration"] for c in body["calls"][0]["children"]] == [0, 1, 2]
    missing = staff_client.get("/api/v1/telemetry/traces/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_aggregates(staff_client):
    make_call(request_model="m", duration_s=0.1)
    make_call(request_model="m", duration_s=0.3, status="timeout")
    body = staff_client.get("/api/v1/telemetry/aggregates", {"window": "1h"}).json()
    (group,) = [g for g in body["groups"] if g["request_model"] == "m"]
    assert group["count"] == 2 and group["error_rate"] == 0.5
    assert group["p50_ms"] == pytest.approx(200.0)
    bad = staff_client.get("/api/v1/telemetry/aggregates", {"window": "forever"})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "window"


def test_reset_needs_permission_and_confirmation(staff_client, staff):
    make_call()
    make_call()
    url = "/api/v1/telemetry/reset"
    denied = staff_client.post(url, {"confirm": "DELETE"}, content_type="application/json")
    assert denied.status_code == 403 and ModelCall.objects.count() == 2
    staff.user_permissions.add(Permission.objects.get(codename="reset_telemetry"))
    staff_client.force_login(type(staff).objects.get(pk=staff.pk))  # fresh permission cache
    unconfirmed = staff_client.post(url, {"confirm": "yes"}, content_type="application/json")
    assert unconfirmed.status_code == 400 and unconfirmed.json()["error"]["field"] == "confirm"
    missing = staff_client.post(url, {}, content_type="application/json")
    assert missing.status_code == 400 and missing.json()["error"]["field"] == "confirm"
    assert ModelCall.objects.count() == 2
    done = staff_client.post(url, {"confirm": "DELETE"}, content_type="application/json")
    assert done.status_code == 200 and done.json() == {"deleted": 2}
    assert ModelCall.objects.count() == 0


def test_learner_filter_takes_the_learners_uuid(staff_client):
    from coaching import services
    from core.identity import services as identity_services
    learner = services.learner_create(client=identity_services.api_client_create(name="tel"))
    make_call(operation="chat", learner_id=learner.pk)
    make_call(operation="chat", learner_id=learner.pk + 1000)
    assert staff_client.get(CALLS, {"learner": str(learner.research_id)}).json()["count"] == 1
    assert staff_client.get(CALLS, {"learner": str(uuid.uuid4())}).json()["count"] == 0
    bad = staff_client.get(CALLS, {"learner": "ana"})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "learner"


def test_calls_name_learner_and_conversation_by_public_id(staff_client):
    """Rows store integer keys; the list and the trace return the UUIDs a client knows, and no
    integer key (a row whose learner is gone has none)."""
    from coaching import services
    from core.identity import services as identity_services
    learner = services.learner_create(client=identity_services.api_client_create(name="tel-ids"))
    conversation = services.conversation_start(learner=learner)
    make_call(trace_id="ids", learner_id=learner.pk, conversation_id=conversation.pk)
    make_call(trace_id="ids", learner_id=learner.pk + 1000, conversation_id=None)
    rows = staff_client.get(CALLS, {"trace": "ids"}).json()["results"]
    assert {(r["learner"], r["conversation"]) for r in rows} == {
        (str(learner.research_id), str(conversation.public_id)), (None, None)}
    assert all("learner_id" not in r and "conversation_id" not in r for r in rows)
    trace = staff_client.get("/api/v1/telemetry/traces/ids").json()
    assert {c["learner"] for c in trace["calls"]} == {str(learner.research_id), None}
