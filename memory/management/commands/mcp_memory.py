"""MCP server over stdio exposing one learner's (or one API client's) memory to any MCP client.

    python manage.py mcp_memory --learner 6f1c…-…      # the learner's id (UUID), as the REST API gives it
    BLOOM_API_TOKEN=bloom_… python manage.py mcp_memory --client-token
                                                       # the learners of the client that token belongs to;
                                                       # tools then take `learner` (UUID)
    python manage.py mcp_memory --client 7             # the same by the client's database key (operators)

`--client-token` takes the client's API token from the environment (not the command line, where
`ps` would show it to every user of the machine): a client needs nothing but what the REST API gave
it. The token is checked again on every tool call, so revoking it ends the server's access at once.

Tools: `memory_query` (raw passages with sources; no chat model), `memory_ingest`,
`memory_ingest_batch` (many items in one call, with the per-item outcomes of the REST batch
endpoint: the same code, memory.api.batch.batch_ingest), `memory_forget`.
Resources: `memory://learners/{learner}/context` (the block the coach reads) and
`memory://learners/{learner}/facts` (live facts, JSON); a learner-scoped server also lists its
learner's two resources. A refused call (bad input, another learner, unknown fact) is an MCP
tool error (`isError: true`) whose text is the API's error shape, so a client sees the failure. Facts are
named by their public id (a UUID), as in the REST API.

Every tool call runs under call_context(service="memory.mcp"), so the embedding calls it makes are
telemetry rows attributed to the learner. Logs go to stderr: stdout is the protocol channel."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any
from uuid import UUID

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from rest_framework.exceptions import ValidationError

from core.errors import ApplicationError, api_exception_handler
from core.identity.models import ApiClient, Learner
from core.identity.services import api_token_authenticate
from core.llm import call_context
from memory import selectors
from memory.api import ids, queries
from memory.api.batch import batch_ingest
from memory.ingest import ingest_facts, ingest_text
from memory.services.forget import fact_delete, learner_forget

logger = logging.getLogger(__name__)
TOKEN_ENV = "BLOOM_API_TOKEN"  # read through settings.BLOOM_API_TOKEN; named in the messages
FACTS_RESOURCE_LIMIT = 200


class Scope:
    """Which learners the server may touch: one learner, or every learner of one API client.
    Learners are named by their UUID; the database key stays inside."""

    def __init__(self, *, learner: UUID | None, client_id: int | None, token: str | None = None):
        self.learner, self.client_id, self.token = learner, client_id, token

    def resolve(self, learner: str | None) -> int:
        if self.token is not None:
            live = api_token_authenticate(raw=self.token)
            if live is None or live.client_id != self.client_id:
                raise ApplicationError("the API token this server was started with is revoked",
                                       code="unauthorized", status=401)
        if self.learner is not None:
            if learner not in (None, "", str(self.learner)):
                raise ApplicationError("this server is scoped to another learner", code="forbidden",
                                       field="learner", status=403)
            return Learner.objects.values_list("pk", flat=True).get(research_id=self.learner)
        if not learner:
            raise ApplicationError("learner (the learner's UUID) is required: this server serves a client",
                                   field="learner")
        try:
            research_id = UUID(str(learner))
        except ValueError:
            raise ApplicationError("learner must be the learner's id (a UUID)", field="learner") from None
        pk = Learner.objects.filter(research_id=research_id, client_id=self.client_id).values_list("pk", flat=True)
        if not pk:
            raise ApplicationError("learner not found for this client", code="not_found", field="learner", status=404)
        return pk[0]


def _error_text(exc: ApplicationError) -> str:
    return json.dumps({"error": {"code": exc.code, "message": str(exc), "field": exc.field}})


def _facts_json(learner_id: int) -> str:
    rows = selectors.fact_list(learner_id=learner_id).filter(superseded_by__isnull=True)[:FACTS_RESOURCE_LIMIT]
    return json.dumps({"facts": [{"id": str(f.public_id), "fact_type": f.fact_type, "content": f.content,
                                  "confidence": f.confidence, "created_at": f.created_at.isoformat(),
                                  "tier": f.tier, "surprise": f.surprise} for f in rows]})


def build_server(scope: Scope):
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    server = MCPServer(name="bloom-memory", instructions=(
        "Long-term memory of a learner. memory_query returns raw passages with their sources "
        "(message and conversation ids, dates, scores); write the answer yourself."))

    def run(work):
        """A refused call becomes an MCP tool error carrying the API's error shape."""
        try:
            return work()
        except ApplicationError as exc:
            raise ToolError(_error_text(exc)) from None
        except ValidationError as exc:  # input checked by a REST serializer: the REST body, every error listed
            raise ToolError(json.dumps(api_exception_handler(exc, {}).data)) from None

    def read(learner: str | None, work):
        try:
            return work(scope.resolve(learner))
        except ApplicationError as exc:
            raise ResourceError(_error_text(exc)) from None

    @server.tool(description="Search the learner's memory. Returns raw passages with sources, best first; "
                             "facts another fact superseded only with include_superseded=true.")
    def memory_query(query: str, limit: int = 5, include_superseded: bool = False, learner: str | None = None) -> str:
        def work():
            lid = scope.resolve(learner)
            with call_context(service="memory.mcp", learner_id=lid, agent="mcp"):
                # The REST search's semantics (superseded facts hidden by default), not the raw ranking.
                results = queries.search(learner_id=lid, query=query, limit=max(1, min(int(limit), 50)),
                                         filters={"include_superseded": include_superseded})
            return json.dumps({"results": results}, default=str)
        return run(work)

    @server.tool(description="Store text (split into passages) or a list of facts "
                             "({fact_type: preference|barrier|progress|insight, content, confidence}).")
    def memory_ingest(text: str | None = None, facts: list[dict[str, Any]] | None = None,
                      fact_type: str = "insight", learner: str | None = None) -> str:
        def work():
            lid = scope.resolve(learner)
            with call_context(service="memory.mcp", learner_id=lid, agent="mcp"):
                if facts:
                    result = ingest_facts(learner_id=lid, items=facts, source_agent="mcp", service="memory.mcp")
                elif text:
                    result = ingest_text(learner_id=lid, text=text, fact_type=fact_type, source_agent="mcp",
                                         service="memory.mcp")
                else:
                    raise ApplicationError("give text or facts", field="text")
            return json.dumps(ids.ingest_out(result.as_dict()), default=str)
        return run(work)

    @server.tool(description="Store many items in one call (at most 1,000): each {content, fact_type?, confidence?, "
                             "occurred_at? (ISO 8601), external_id? (your own id; a resend of a known one is a "
                             "duplicate), metadata? (object, returned on every hit)}. Returns, per item and in "
                             "order, what happened: created, surprise (conflicts_with), strengthened or "
                             "duplicate, with the fact_id that now holds it. One invalid item rejects the call.")
    def memory_ingest_batch(items: list[dict[str, Any]], learner: str | None = None) -> str:
        def work():
            lid = scope.resolve(learner)
            with call_context(service="memory.mcp", learner_id=lid, agent="mcp"):
                body = batch_ingest(learner_id=lid, data={"items": items}, source_agent="mcp", service="memory.mcp")
            return json.dumps(body, default=str)
        return run(work)

    @server.tool(description="Forget: delete one fact (fact_id, the fact's id as memory_query and the facts "
                             "resource give it) or, with all=true, everything about the learner.")
    def memory_forget(fact_id: str | None = None, all: bool = False, learner: str | None = None) -> str:
        def work():
            lid = scope.resolve(learner)
            if all:
                return json.dumps({"deleted": learner_forget(learner_id=lid)})
            fact = ids.fact_get(public_id=fact_id) if fact_id else None
            if fact is None or fact.learner_id != lid:
                raise ApplicationError("fact not found", code="not_found", field="fact_id", status=404)
            return json.dumps({"deleted": fact_delete(fact_id=fact.pk)})
        return run(work)

    @server.resource("memory://learners/{learner}/context", mime_type="text/plain",
                     description="The memory block the coach's specialists read (summary + recent live facts).")
    def context_resource(learner: str) -> str:
        return read(learner, selectors.build_context)

    @server.resource("memory://learners/{learner}/facts", mime_type="application/json",
                     description=f"The learner's live facts, newest first (at most {FACTS_RESOURCE_LIMIT}).")
    def facts_resource(learner: str) -> str:
        return read(learner, _facts_json)

    if scope.learner is not None:
        # Listed (not only templated), so a client discovers the one learner it may read.
        uuid = str(scope.learner)
        server.resource(f"memory://learners/{uuid}/context", name="context", mime_type="text/plain")(
            lambda: read(uuid, selectors.build_context))
        server.resource(f"memory://learners/{uuid}/facts", name="facts", mime_type="application/json")(
            lambda: read(uuid, _facts_json))
    return server


class Command(BaseCommand):
    help = "Serve a learner's memory over MCP (stdio)."

    def add_arguments(self, parser):
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--learner", type=UUID, help="serve exactly this learner's memory (the learner's UUID)")
        group.add_argument("--client", type=int, help="serve the learners of this API client (its database key)")
        group.add_argument("--client-token", action="store_true",
                           help=f"serve the learners of the API client whose token is in ${TOKEN_ENV}")

    def handle(self, *args, **options):
        # stdout carries JSON-RPC: keep every log line on stderr.
        logging.basicConfig(stream=sys.stderr, force=True, level=logging.WARNING)
        build_server(scope_from_options(options)).run("stdio")



def scope_from_options(options: dict[str, Any]) -> Scope:
    """The server's scope from its command line (and, for --client-token, the environment); a
    learner, client or token that does not exist is a CommandError before the server starts."""
    if options.get("client_token"):
        raw = settings.BLOOM_API_TOKEN
        if not raw:
            raise CommandError(f"--client-token reads the API token from ${TOKEN_ENV}, which is not set")
        token = api_token_authenticate(raw=raw)
        if token is None:
            raise CommandError(f"${TOKEN_ENV} is not a live API token (unknown, revoked, or its client inactive)")
        return Scope(learner=None, client_id=token.client_id, token=raw)
    if options.get("learner") is not None and not Learner.objects.filter(research_id=options["learner"]).exists():
        raise CommandError(f"learner {options['learner']} does not exist")
    if options.get("client") is not None and not ApiClient.objects.filter(pk=options["client"]).exists():
        raise CommandError(f"client {options['client']} does not exist")
    return Scope(learner=options.get("learner"), client_id=options.get("client"))
