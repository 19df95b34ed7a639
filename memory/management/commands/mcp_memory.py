"""MCP server over stdio exposing one learner's (or one API client's) memory to any MCP client:
`memory_query` (raw passages with sources; no chat model), `memory_ingest`, `memory_forget`.

    python manage.py mcp_memory --learner 42
    python manage.py mcp_memory --client 7      # tools then take a learner_id, scoped to that client

Every tool call runs under call_context(service="memory.mcp"), so the embedding calls it makes are
telemetry rows attributed to the learner. Logs go to stderr: stdout is the protocol channel."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError

from bloom.llm import call_context
from memory import rules, selectors, services
from memory.ingest import ingest_facts, ingest_text

logger = logging.getLogger(__name__)


class Scope:
    """Which learners the server may touch: one learner, or every learner of one API client."""

    def __init__(self, *, learner_id: int | None, client_id: int | None):
        self.learner_id, self.client_id = learner_id, client_id

    def resolve(self, learner_id: int | None) -> int:
        Learner = apps.get_model("coaching", "Learner")
        if self.learner_id is not None:
            if learner_id not in (None, self.learner_id):
                raise rules.MemoryInputError("this server is scoped to another learner", code="forbidden",
                                             field="learner_id")
            return self.learner_id
        if learner_id is None:
            raise rules.MemoryInputError("learner_id is required (client-scoped server)", field="learner_id")
        if not Learner.objects.filter(pk=learner_id, client_id=self.client_id).exists():
            raise rules.MemoryInputError("learner not found for this client", code="not_found", field="learner_id")
        return learner_id


def _error(exc: rules.MemoryInputError) -> str:
    return json.dumps({"error": {"code": exc.code, "message": str(exc), "field": exc.field}})


def build_server(scope: Scope):
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name="bloom-memory", instructions=(
        "Long-term memory of a learner. memory_query returns raw passages with their sources "
        "(message and conversation ids, dates, scores); write the answer yourself."))

    @server.tool(description="Search the learner's memory. Returns raw passages with sources, best first.")
    def memory_query(query: str, limit: int = 5, learner_id: int | None = None) -> str:
        try:
            lid = scope.resolve(learner_id)
            with call_context(service="memory.mcp", learner_id=lid, agent="mcp"):
                results = selectors.search_memory(learner_id=lid, query=query, limit=limit)
        except rules.MemoryInputError as exc:
            return _error(exc)
        return json.dumps({"results": results})

    @server.tool(description="Store text (split into passages) or a list of facts "
                             "({fact_type: preference|barrier|progress|insight, content, confidence}).")
    def memory_ingest(text: str | None = None, facts: list[dict[str, Any]] | None = None,
                      fact_type: str = "insight", learner_id: int | None = None) -> str:
        try:
            lid = scope.resolve(learner_id)
            with call_context(service="memory.mcp", learner_id=lid, agent="mcp"):
                if facts:
                    result = ingest_facts(learner_id=lid, items=facts, source_agent="mcp", service="memory.mcp")
                elif text:
                    result = ingest_text(learner_id=lid, text=text, fact_type=fact_type, source_agent="mcp",
                                         service="memory.mcp")
                else:
                    raise rules.MemoryInputError("give text or facts", field="text")
        except rules.MemoryInputError as exc:
            return _error(exc)
        return json.dumps(result.as_dict())

    @server.tool(description="Forget: delete one fact (fact_id) or, with all=true, everything about the learner.")
    def memory_forget(fact_id: int | None = None, all: bool = False, learner_id: int | None = None) -> str:
        try:
            lid = scope.resolve(learner_id)
            if all:
                return json.dumps({"deleted": services.learner_forget(learner_id=lid)})
            fact = selectors.fact_get(fact_id=fact_id) if fact_id is not None else None
            if fact is None or fact.learner_id != lid:
                raise rules.MemoryInputError("fact not found", code="not_found", field="fact_id")
            return json.dumps({"deleted": services.fact_delete(fact_id=fact.pk)})
        except rules.MemoryInputError as exc:
            return _error(exc)

    return server


class Command(BaseCommand):
    help = "Serve a learner's memory over MCP (stdio)."

    def add_arguments(self, parser):
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--learner", type=int, help="serve exactly this learner's memory")
        group.add_argument("--client", type=int, help="serve the learners of this API client")

    def handle(self, *args, **options):
        Learner = apps.get_model("coaching", "Learner")
        ApiClient = apps.get_model("coaching", "ApiClient")
        if options["learner"] is not None and not Learner.objects.filter(pk=options["learner"]).exists():
            raise CommandError(f"learner {options['learner']} does not exist")
        if options["client"] is not None and not ApiClient.objects.filter(pk=options["client"]).exists():
            raise CommandError(f"client {options['client']} does not exist")
        # stdout carries JSON-RPC: keep every log line on stderr.
        logging.basicConfig(stream=sys.stderr, force=True, level=logging.WARNING)
        build_server(Scope(learner_id=options["learner"], client_id=options["client"])).run("stdio")
