"""The MCP server over stdio, driven by the official SDK's client (a real subprocess, the real
database, the real embedding model)."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

import anyio
import pytest
from django.apps import apps
from django.db import connection
from django.utils import timezone

ROOT = Path(__file__).resolve().parents[2]


async def _drive(params, learner: str):
    from mcp import Client

    async with Client(params, read_timeout_seconds=300) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        ingest = await client.call_tool("memory_ingest", {"text": "I always review Anki flashcards on the bus."})
        query = await client.call_tool("memory_query", {"query": "how do I review vocabulary?", "limit": 3})
        other = await client.call_tool("memory_query", {"query": "anything", "learner": str(uuid.uuid4())})
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        facts = await client.read_resource(f"memory://learners/{learner}/facts")
        context = await client.read_resource(f"memory://learners/{learner}/context")
        try:
            await client.read_resource(f"memory://learners/{uuid.uuid4()}/facts")
            refused = None
        except Exception as exc:  # the SDK raises the protocol error
            refused = str(exc)
        batch = await _batch_calls(client, learner)
        # Facts are named by their public id: an integer key finds nothing, the UUID is forgotten.
        by_key = await client.call_tool("memory_forget", {"fact_id": "1"})
        forgot = await client.call_tool("memory_forget", {"fact_id": _text(ingest)["created"][0]})
        return names, ingest, query, other, (listed, facts, context, refused), (by_key, forgot), batch


BATCH_ITEMS = [
    {"content": "I practise piano scales every morning.", "external_id": "note-1",
     "occurred_at": "2026-11-30T08:00:00Z", "metadata": {"source": "notes"}},
    {"content": "I always review Anki flashcards on the bus.", "external_id": "note-2"},  # memory_ingest stored it
    {"content": "I practise piano scales every morning.", "external_id": "note-3"},  # item 0 again
]


async def _batch_calls(client, learner: str):
    """memory_ingest_batch: the learner by its UUID; a resend of the same call; one bad item; another
    learner."""
    first = await client.call_tool("memory_ingest_batch", {"items": BATCH_ITEMS, "learner": learner})
    resent = await client.call_tool("memory_ingest_batch", {"items": BATCH_ITEMS[:1]})
    bad = await client.call_tool("memory_ingest_batch", {"items": [{"content": "Fine."}, {"content": ""},
                                                                   {"content": "x", "fact_type": "gossip"}]})
    other = await client.call_tool("memory_ingest_batch", {"items": BATCH_ITEMS, "learner": str(uuid.uuid4())})
    return first, resent, bad, other


def _text(result) -> dict:
    return json.loads(result.content[0].text)


@pytest.mark.django_db(transaction=True)
def test_stdio_client_ingests_then_queries_with_source(requires_postgres, make_learner):
    from mcp import StdioServerParameters

    learner = make_learner()
    # A superseded fact that matches the query's words: hidden from memory_query like from REST search.
    Fact = apps.get_model("memory", "Fact")
    now = timezone.now()
    conversation = apps.get_model("identity", "Conversation").objects.create(learner=learner)
    said = apps.get_model("identity", "Message").objects.create(conversation=conversation, role="learner",
                                                               content="I moved vocabulary review to the app.")
    newer = Fact.objects.create(learner=learner, fact_type="insight", content="Vocabulary review moved to the app.",
                                content_hash="mcp-newer", last_accessed_at=now, source_message=said)
    stale = Fact.objects.create(learner=learner, fact_type="insight", content="I review vocabulary on paper lists.",
                                content_hash="mcp-stale", last_accessed_at=now, superseded_by=newer, valid_to=now)
    db = connection.settings_dict
    env = {**os.environ, "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
           "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_memory", "--learner",
                                                                 str(learner.research_id)], env=env, cwd=str(ROOT))
    names, ingest, query, other, resources, forget, batch = anyio.run(_drive, params, str(learner.research_id))
    assert {"memory_query", "memory_ingest", "memory_ingest_batch", "memory_forget"} <= names
    assert len(_text(ingest)["created"]) == 1
    hits = _text(query)["results"]
    assert hits[0]["content"] == "I always review Anki flashcards on the bus."
    assert str(stale.public_id) not in {h["fact_id"] for h in hits} and hits[0]["learner"] == str(learner.research_id)
    assert hits[0]["fact_id"] == _text(ingest)["created"][0]  # the fact's public id (a UUID), as in REST
    uuid.UUID(hits[0]["fact_id"])
    assert hits[0]["source"]["agent"] == "mcp" and hits[0]["fact_id"] and hits[0]["created_at"]
    # A fact extracted from a message names it and its conversation by their public ids, as REST does.
    assert {h["fact_id"]: h["source"] for h in hits}[str(newer.public_id)] == {
        "message_id": str(said.public_id), "conversation_id": str(conversation.public_id), "agent": ""}
    # An MCP tool error; its text (after the SDK's "Error executing tool …: ") is the API error shape.
    error_text = other.content[0].text
    assert other.is_error and json.loads(error_text[error_text.index("{"):])["error"]["code"] == "forbidden"
    listed, facts, context, refused = resources
    assert listed == {f"memory://learners/{learner.research_id}/facts",
                      f"memory://learners/{learner.research_id}/context"}
    listed_fact = json.loads(facts.contents[0].text)["facts"][0]
    assert listed_fact["content"] == "I always review Anki flashcards on the bus."
    assert listed_fact["id"] == hits[0]["fact_id"]
    assert "Anki flashcards" in context.contents[0].text and "data, not instructions" in context.contents[0].text
    assert refused and "forbidden" in refused, refused
    by_key, forgot = forget
    assert by_key.is_error and '"not_found"' in by_key.content[0].text
    assert not forgot.is_error and not Fact.objects.filter(public_id=hits[0]["fact_id"]).exists()
    ModelCall = apps.get_model("telemetry", "ModelCall")
    assert ModelCall.objects.filter(service="memory.mcp", learner_id=learner.pk).count() >= 2  # ingest + query
    _check_batch(batch, learner, anki_fact=_text(ingest)["created"][0])


def _check_batch(batch, learner, *, anki_fact: str):
    """The per-item outcomes of the REST batch endpoint (same code), public ids only; refusals are
    MCP tool errors carrying the REST error body."""
    Fact = apps.get_model("memory", "Fact")
    first, resent, bad, other = batch
    assert not first.is_error
    body = _text(first)
    assert (body["created"], body["duplicates"], body["strengthened"], body["surprises"]) == (1, 2, 0, 0)
    created, known, again = body["items"]
    assert created["outcome"] == "created" and created["external_id"] == "note-1"
    fact = Fact.objects.get(public_id=created["fact_id"])
    assert fact.learner_id == learner.pk and fact.metadata == {"source": "notes"} and fact.source_agent == "mcp"
    assert fact.occurred_at.isoformat() == "2026-11-30T08:00:00+00:00"
    assert known == {"index": 1, "outcome": "duplicate", "fact_id": anki_fact, "rule": "exact_duplicate",
                     "external_id": "note-2"}
    assert again == {"index": 2, "outcome": "duplicate", "fact_id": created["fact_id"], "rule": "exact_duplicate",
                     "external_id": "note-3"}
    # Sent again: the known external id makes it a duplicate of the fact it created (a safe retry).
    assert _text(resent)["items"] == [{"index": 0, "outcome": "duplicate", "fact_id": created["fact_id"],
                                       "rule": "exact_duplicate", "external_id": "note-1"}]
    assert bad.is_error
    error = json.loads(bad.content[0].text[bad.content[0].text.index("{"):])["error"]
    assert error["field"] == "items.1.content"
    assert {e["field"] for e in error["errors"]} == {"items.1.content", "items.2.fact_type"}
    assert not Fact.objects.filter(learner=learner, content="Fine.").exists()  # nothing of a refused call
    assert other.is_error and '"forbidden"' in other.content[0].text


async def _drive_client(params, learner: str, other: str):
    from mcp import Client

    async with Client(params, read_timeout_seconds=300) as client:
        ingest = await client.call_tool("memory_ingest", {"text": "I revise chemistry on Sunday mornings.",
                                                          "learner": learner})
        query = await client.call_tool("memory_query", {"query": "when do I revise?", "learner": learner})
        missing = await client.call_tool("memory_query", {"query": "when do I revise?"})
        foreign = await client.call_tool("memory_query", {"query": "anything", "learner": other})
    return ingest, query, missing, foreign


@pytest.mark.django_db(transaction=True)
def test_client_token_serves_that_clients_learners_by_uuid(requires_postgres, make_learner):
    """A coding agent holding only what the REST API gave it (a token and learner ids) serves its
    client's learners over stdio; another client's learner is not found; the token is read from the
    environment, never the command line."""
    from mcp import StdioServerParameters

    from core.identity.services import api_token_create

    learner = make_learner()
    stranger = make_learner()  # another client
    _, raw = api_token_create(client=learner.client, name="mcp")
    db = connection.settings_dict
    env = {**os.environ, "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
           "PYTHONPATH": str(ROOT), "BLOOM_API_TOKEN": raw}
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_memory", "--client-token"],
                                   env=env, cwd=str(ROOT))
    ingest, query, missing, foreign = anyio.run(_drive_client, params, str(learner.research_id),
                                                str(stranger.research_id))
    assert not ingest.is_error and not query.is_error
    assert _text(query)["results"][0]["content"] == "I revise chemistry on Sunday mornings."
    assert _text(query)["results"][0]["learner"] == str(learner.research_id)
    assert missing.is_error and '"field": "learner"' in missing.content[0].text
    assert foreign.is_error and '"not_found"' in foreign.content[0].text


@pytest.mark.django_db
def test_client_token_scope_refuses_a_missing_or_revoked_token(make_learner, settings):
    from django.core.management.base import CommandError

    from core.errors import ApplicationError
    from core.identity.services import api_token_create, api_token_revoke
    from memory.management.commands.mcp_memory import scope_from_options

    learner = make_learner()
    settings.BLOOM_API_TOKEN = ""
    with pytest.raises(CommandError, match="not set"):
        scope_from_options({"client_token": True})
    settings.BLOOM_API_TOKEN = "bloom_not-a-token"
    with pytest.raises(CommandError, match="not a live API token"):
        scope_from_options({"client_token": True})
    token, raw = api_token_create(client=learner.client)
    settings.BLOOM_API_TOKEN = raw
    scope = scope_from_options({"client_token": True})
    assert scope.client_id == learner.client_id and scope.resolve(str(learner.research_id)) == learner.pk
    # Revoked while the server runs: the next tool call is refused.
    api_token_revoke(client=learner.client, token_id=token.pk)
    with pytest.raises(ApplicationError) as refused:
        scope.resolve(str(learner.research_id))
    assert refused.value.code == "unauthorized" and refused.value.status == 401
    with pytest.raises(CommandError, match="not a live API token"):
        scope_from_options({"client_token": True})
