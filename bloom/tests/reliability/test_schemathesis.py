"""Schemathesis against the live OpenAPI schema, through the WSGI app, authenticated as an API
client: generated requests for every documented operation must never produce a 5xx (a 503 with
Retry-After from the model layer would be a defined outcome; the scripted model here never fails),
and every 4xx must be in the project's error shape.

Bounded: a few examples per operation, no shrinking beyond the explicit phases. Path ids are
mapped to the client's own objects, so bodies and query strings reach the views' real code paths
instead of stopping at a 404. The chat model is the scripted fake (a fixed reply): this test is
about input handling, not what the model says."""

from __future__ import annotations

import pytest
import schemathesis
from django.test import override_settings
from hypothesis import HealthCheck, Phase, settings

from core.env import ModelSpec

MAX_EXAMPLES = 8

schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture
def api_schema(tenants):
    from django.core import signals
    from django.db import close_old_connections

    from bloom.wsgi import application

    # As Django's own test client does: a request must not close the connection that holds the
    # test's transaction (outside a test, this is what recycles connections between requests).
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/schema/", application)
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def scripted_model():
    from core.llm.providers import fake_chat
    from core.llm.providers.fake import Scripted
    from core.llm.resilience import reset_breakers

    fake = fake_chat()
    fake.reset()
    fake.default = lambda request: Scripted(text="Keep going, one step at a time.")
    reset_breakers()
    with override_settings(BLOOM_LLM=ModelSpec("fake", "scripted")):
        yield fake
    fake.reset()


def _disposable(client) -> dict:
    import hashlib
    import uuid

    from django.utils import timezone

    from coaching import services
    from memory.models import Fact

    learner = services.learner_create(client=client, display_name="disposable")
    text = f"disposable fact {uuid.uuid4().hex}"
    fact = Fact.objects.create(learner=learner, fact_type="insight", content=text, last_accessed_at=timezone.now(),
                               content_hash=hashlib.sha256(text.encode()).hexdigest(), embedding=[0.01] * 384)
    return {"research_id": str(learner.research_id), "learner_id": learner.pk, "fact_id": fact.pk}


@pytest.fixture
def unthrottled(settings):
    # Thousands of generated requests from one client would hit the per-client budget and test
    # only the 429 path; the throttle has its own test (test_access).
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"client": "1000000/min"}}


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_generated_requests_never_5xx(case, tenants, scripted_model, unthrottled):
    from core.identity.services import api_token_create

    a, _ = tenants
    own = {"research_id": str(a.learner.research_id), "learner_id": a.learner.pk,
           "conversation_id": a.conversation.pk, "fact_id": a.fact.pk, "trace_id": a.turn.trace_id,
           "session_id": a.session.pk}
    if case.method.upper() == "DELETE":
        # Every operation shares the fixture's objects: a DELETE gets objects of its own, or the
        # learner it erased would turn every later operation into a 404 that tests nothing.
        own.update(_disposable(a.client))
    for name in list(case.path_parameters or {}):
        if name in own:
            case.path_parameters[name] = own[name]
    # A fresh token per call: the generated calls may rotate or revoke the token they used.
    _, raw = api_token_create(client=a.client, name="schemathesis")
    response = case.call(headers={"Authorization": f"Bearer {raw}"})
    # One line per generated request: `pytest -s … | grep -c schemathesis-case` counts the examples.
    print(f"schemathesis-case {case.method} {case.path} {response.status_code}")
    where = f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]}"
    assert response.status_code < 500 or (response.status_code == 503 and "Retry-After" in response.headers), where
    if response.status_code >= 400 and "json" in response.headers.get("Content-Type", ""):
        body = response.json()
        assert set(body) == {"error"} and {"code", "message", "field"} <= set(body["error"]), where
