"""A client generated from `/api/schema/` (openapi-python-client) runs the README quickstart
against a live server: typed request models in, typed response models out, the error shape as a
typed model. If an operation loses its types, the generated call returns None or a dict and
this test fails. The streamed reply (`Accept: text/event-stream`) goes through the generated
client's public surface only: its httpx client (`get_httpx_client()`, base URL and token set), the
operation's path from the schema it was generated from and a body from the generated request
model's `to_dict()`; the final frame is read into the generated event model. Replies come from
the scripted FAKE model; memory search uses real MiniLM."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path

import pytest

pytest.importorskip("openapi_python_client")


def _sse_frames(lines) -> list[tuple[str, dict]]:
    """(event, data) of each server-sent event frame."""
    frames, event = [], None
    for line in lines:
        if line.startswith("event: "):
            event = line[len("event: "):]
        elif line.startswith("data: "):
            frames.append((event, json.loads(line[len("data: "):])))
    return frames


@pytest.fixture
def generated(tmp_path):
    from drf_spectacular.generators import SchemaGenerator

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(bin_dir / "openapi-python-client"), "generate", "--path", str(schema), "--meta",
                           "none", "--output-path", str(tmp_path / "bloom_client")],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout, done.stdout  # every operation and model was generated
    sys.path.insert(0, str(tmp_path))

    def load(name: str):
        return importlib.import_module(f"bloom_client.{name}")

    load.schema = json.loads(schema.read_text())  # what the client was generated from
    try:
        yield load
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "bloom_client" or m.startswith("bloom_client.")]:
            del sys.modules[name]


def test_generated_client_runs_the_quickstart(live_server, fake_model, settings, generated):
    from core.identity import services as identity_services
    from core.llm.providers.fake import Scripted
    fake_model.default = lambda request: Scripted(text="Great, let's plan your first week.")
    settings.BLOOM_MEMORY_EXTRACTION = False
    client_row = identity_services.api_client_create(name="generated")
    _, token = identity_services.api_token_create(client=client_row, name="gen")
    models = generated("models")
    api = lambda path: generated(f"api.{path}")  # noqa: E731
    client = generated("client").AuthenticatedClient(base_url=live_server.url, token=token)

    learner = api("learners.learners_create").sync(
        client=client, body=models.LearnerCreateInRequest(display_name="Ana", timezone="Europe/Lisbon"))
    assert isinstance(learner, models.LearnerOut) and isinstance(learner.id, uuid.UUID)
    conversation = api("learners.learners_conversations_create").sync(learner.id, client=client)
    assert isinstance(conversation, models.ConversationOut) and isinstance(conversation.id, uuid.UUID)
    send = api("conversations.conversations_messages_create")
    turn = send.sync(conversation.id, client=client, body=models.MessageInRequest(content="I want to learn Spanish"
                                                                                          " for a trip"))
    assert isinstance(turn, models.TurnReplyOut) and turn.reply.content and turn.specialist == "onboarding"

    # The streamed reply: OpenAPI 3.0 gives a generated client no streaming call, so the request is
    # built from public parts: the operation's path in the schema, the generated body model.
    [path] = [p for p, item in generated.schema["paths"].items()
              if item.get("post", {}).get("operationId") == "conversations_messages_create"]
    body = models.MessageInRequest(content="About 3 hours a week").to_dict()
    with client.get_httpx_client().stream("POST", path.format(conversation_id=conversation.id), json=body,
                                          headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        frames = _sse_frames(response.iter_lines())
    assert [event for event, _ in frames][-1] == "final" and {e for e, _ in frames} <= {"token", "final"}
    final = models.StreamFinalEvent.from_dict({"event": "final", "data": frames[-1][1]})
    assert isinstance(final.data, models.StreamFinalData) and final.data.trace_id
    assert isinstance(final.data.message_id, uuid.UUID) and isinstance(final.data.reply_to, uuid.UUID)
    streamed_text = "".join(models.StreamTokenData.from_dict(data).text for event, data in frames if event == "token")
    assert final.data.content and (final.data.replaced or streamed_text.strip() == final.data.content)

    fact = models.FactInputRequest(fact_type=models.FactTypeEnum.PREFERENCE,
                                   content="Ana studies best on the train in the morning.")
    ingest = api("memory.memory_learners_facts_create").sync(
        learner.id, client=client, body=models.IngestInputRequest(facts=[fact]))
    assert isinstance(ingest, models.IngestOutput) and len(ingest.created) == 1
    assert isinstance(ingest.created[0], uuid.UUID)
    hits = api("memory.memory_learners_search_retrieve").sync(learner.id, client=client,
                                                               q="when does Ana like to study", limit=3)
    assert isinstance(hits, models.SearchOutput) and hits.results[0].fact_id == ingest.created[0]
    assert hits.results[0].learner == learner.id

    session = api("learners.learners_sessions_create").sync(
        learner.id, client=client,
        body=models.SessionInRequest(start=datetime(2030, 1, 7, 8, 0), duration_minutes=30, topic="verbs"))
    assert isinstance(session, models.SessionOut) and session.week_start.isoformat() == "2030-01-07"
    assert isinstance(session.id, uuid.UUID)
    plans = api("learners.learners_plans_list").sync(learner.id, client=client)
    assert isinstance(plans, models.PaginatedPlanOutList) and plans.results[0].sessions[0].id == session.id
    done = api("sessions.sessions_checkins_create").sync(
        session.id, client=client, body=models.CheckInInRequest(outcome=models.CheckInOutcomeEnum.COMPLETED))
    assert isinstance(done, models.CheckInCreatedOut) and done.session_detail.status.value == "completed"

    missing = api("learners.learners_retrieve").sync(uuid.uuid4(), client=client)
    assert isinstance(missing, models.ErrorOut) and missing.error.code == "not_found"
