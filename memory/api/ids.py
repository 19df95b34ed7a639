"""Clients name a fact by its public UUID (`Fact.public_id`), never by the integer key the memory
services work with. These translate at the edge, for the REST API and the MCP server alike: a
UUID from a client to the fact, and the integer ids in a service's result to UUIDs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from uuid import UUID

from django.db.models import F, QuerySet

from memory.models import Fact


def fact_get(*, public_id: UUID | str) -> Fact | None:
    """The fact behind a public id, or None (also for a string that is not a UUID)."""
    try:
        public_id = UUID(str(public_id))
    except ValueError:
        return None
    return Fact.objects.filter(public_id=public_id).defer("embedding").first()


def fact_public_ids(pks: Iterable[int | None]) -> dict[int, UUID]:
    wanted = {pk for pk in pks if pk is not None}
    return dict(Fact.objects.filter(pk__in=wanted).values_list("id", "public_id")) if wanted else {}


def ingest_out(result: dict[str, Any]) -> dict[str, Any]:
    """`IngestResult.as_dict()` with public ids in `created`, `strengthened` and `surprises`."""
    lists = ("created", "strengthened", "surprises")
    public = fact_public_ids(pk for name in lists for pk in result[name])
    return {**result, **{name: [public[pk] for pk in result[name]] for name in lists}}


def batch_items_out(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-item batch outcomes with public ids in `fact_id` and `conflicts_with`."""
    public = fact_public_ids([i.get("fact_id") for i in items] + [i.get("conflicts_with") for i in items])
    out = []
    for item in items:
        item = {**item, "fact_id": public.get(item.get("fact_id"))}
        if item.get("conflicts_with") is not None:
            item["conflicts_with"] = public[item["conflicts_with"]]
        out.append(item)
    return out


def with_public_refs(facts: QuerySet[Fact]) -> QuerySet[Fact]:
    """The public ids of the facts, the summary, the message and the conversation a fact points
    at, as annotations (one LEFT JOIN each) that FactOutputSerializer reads."""
    return facts.annotate(conflicts_with_public_id=F("conflicts_with__public_id"),
                          superseded_by_public_id=F("superseded_by__public_id"),
                          summary_public_id=F("summary__public_id"),
                          source_message_public_id=F("source_message__public_id"),
                          source_conversation_public_id=F("source_message__conversation__public_id"))
