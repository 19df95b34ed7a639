"""The FactHistory row every fact change writes: what a fact looked like before and after.

Clients read these rows as they are stored (`GET /api/v1/memory/facts/<id>/history`), so a row
names another fact or a summary by its public UUID (a string), never by the integer key:
`superseded_by`, `by`, `replaces`, `conflicts_with` and `merged` hold a fact's `public_id`,
`summary` a summary's, `source_conversation` a conversation's. Migration 0008 rewrote the rows
stored before."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Model

from core.identity.models import Message
from memory.models import Fact, FactHistory, Summary


def public_refs(model: type[Model], pks: Iterable[int | None]) -> dict[int, str]:
    """The public ids (as strings) of these rows of `model`, in one query; a row that is gone is
    left out."""
    wanted = {pk for pk in pks if pk is not None}
    if not wanted:
        return {}
    return {pk: str(public) for pk, public in model.objects.filter(pk__in=wanted).values_list("pk", "public_id")}


def fact_ref(pk: int | None) -> str | None:
    return public_refs(Fact, [pk]).get(pk) if pk is not None else None


def message_conversation_ref(message_id: int | None) -> str | None:
    """The public id of the conversation a message is in (a message has no public id of its own)."""
    if message_id is None:
        return None
    public = Message.objects.filter(pk=message_id).values_list("conversation__public_id", flat=True).first()
    return str(public) if public else None


def fact_snapshot(fact: Fact) -> dict[str, Any]:
    return {"fact_type": fact.fact_type, "content": fact.content, "confidence": round(fact.confidence, 4),
            "tier": fact.tier, "archived": fact.archived, "access_count": fact.access_count,
            "surprise": fact.surprise, "superseded_by": fact_ref(fact.superseded_by_id),
            "summary": public_refs(Summary, [fact.summary_id]).get(fact.summary_id)}


def history_write(fact: Fact, *, change: str, before: dict | None, after: dict | None, service: str) -> FactHistory:
    return FactHistory.objects.create(fact=fact, change=change, before=before, after=after, service=service)
