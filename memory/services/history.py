"""The FactHistory row every fact change writes: what a fact looked like before and after."""

from __future__ import annotations

from typing import Any

from memory.models import Fact, FactHistory


def fact_snapshot(fact: Fact) -> dict[str, Any]:
    return {"fact_type": fact.fact_type, "content": fact.content, "confidence": round(fact.confidence, 4),
            "tier": fact.tier, "archived": fact.archived, "access_count": fact.access_count,
            "surprise": fact.surprise, "superseded_by": fact.superseded_by_id, "summary": fact.summary_id}


def history_write(fact: Fact, *, change: str, before: dict | None, after: dict | None, service: str) -> FactHistory:
    return FactHistory.objects.create(fact=fact, change=change, before=before, after=after, service=service)
