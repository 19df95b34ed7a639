"""Reads behind the API's fact filters (list and search), on top of `memory.selectors`.

Search itself stays `selectors.search_memory` (one ranking for the coach, the API and MCP). The
filters are applied to its ranked candidates: the search is asked for more than the page it must
return (`FILTER_OVERFETCH` times, up to the search limit), the candidates are checked against the
filters in one query, and the best `limit` that pass are returned. A very selective filter over a
learner with many facts can therefore return fewer than `limit` hits even though more matching
facts exist further down the ranking; the list endpoint (exact filters, paginated) has none of
that limit. Superseded facts are a filter like the others, on by default: they leave search
unless `include_superseded=true`."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from core import rows, statements
from core.identity.models import Learner
from memory import conf, selectors
from memory.api import ids
from memory.models import Fact

FILTER_OVERFETCH = 5


# Every learner route looks its learner up first; the statement is written once rather than
# compiled by the ORM per request (core.rows). Not cached: a learner erased a moment ago, or
# another client's, is a 404 at once.
_LEARNER_FIELDS = ("id", "research_id", "client_id")
_LEARNER_SQL = "SELECT id, research_id, client_id FROM coaching_learner WHERE research_id = %s"


def learner_for(*, research_id, client_id: int | None, staff: bool) -> Learner | None:
    """The learner behind a UUID for this caller (staff: any learner), or None; only its id,
    research id and client are loaded."""
    if not staff and client_id is None:
        return None
    _, found = statements.fetch_rows(_LEARNER_SQL, [rows.db_value(Learner, "research_id", research_id)])
    row = found[0] if found else None  # research_id is unique
    if row is None or (not staff and row[2] != client_id):
        return None
    return rows.instance(Learner, _LEARNER_FIELDS, row)


def filtered_facts(*, learner_id: int, filters: dict[str, Any]) -> QuerySet[Fact]:
    """A learner's facts under the API filters, newest first (exact; used by the list)."""
    qs = selectors.fact_list(learner_id=learner_id, fact_type=filters.get("fact_type"), tier=filters.get("tier"),
                             surprise=filters.get("surprise"), archived=filters.get("archived"))
    return ids.with_public_refs(_extra(qs, filters).select_related("learner"))


def _extra(qs: QuerySet[Fact], filters: dict[str, Any]) -> QuerySet[Fact]:
    if not filters.get("include_superseded"):
        qs = qs.filter(superseded_by__isnull=True)
    lookups = {"created_after": "created_at__gte", "created_before": "created_at__lt",
               "accessed_after": "last_accessed_at__gte", "accessed_before": "last_accessed_at__lt",
               "source_agent": "source_agent", "conversation": "source_message__conversation__public_id"}
    return qs.filter(**{lookup: filters[name] for name, lookup in lookups.items()
                        if filters.get(name) not in (None, "")})


def _narrowing(filters: dict[str, Any]) -> bool:
    return any(filters.get(k) not in (None, "", False) for k in filters if k not in ("q", "limit", "touch",
                                                                                     "include_superseded"))


def search(*, learner_id: int, query: str, limit: int, filters: dict[str, Any],
           touch: bool = True) -> list[dict[str, Any]]:
    """Ranked hits of `selectors.search_memory` that pass the filters, best first, at most `limit`.
    Only the hits returned count as accessed, and none with `touch=False` (a read-only search)."""
    from memory.services.access import facts_mark_accessed_later

    narrowing = _narrowing(filters)
    include = bool(filters.get("include_superseded"))
    if not narrowing:  # superseded facts are left out (or kept) by the search itself
        hits = selectors.search_memory(learner_id=learner_id, query=query, limit=limit, include_superseded=include,
                                       touch=touch, public_refs=True)
        return _annotate(hits)
    fetch = min(conf.SEARCH_MAX_LIMIT, limit * FILTER_OVERFETCH)
    hits = selectors.search_memory(learner_id=learner_id, query=query, limit=fetch, touch=False,
                                   include_superseded=include, public_refs=True)
    ids = [h["fact_id"] for h in hits]
    base = Fact.objects.filter(learner_id=learner_id, pk__in=ids)
    if filters.get("fact_type"):
        base = base.filter(fact_type=filters["fact_type"])
    if filters.get("tier"):
        base = base.filter(tier=filters["tier"])
    for flag in ("surprise", "archived"):
        if filters.get(flag) is not None:
            base = base.filter(**{flag: filters[flag]})
    passing = set(_extra(base, filters).values_list("id", flat=True))
    kept = [h for h in hits if h["fact_id"] in passing][:limit]
    if touch:
        facts_mark_accessed_later(fact_ids=[h["fact_id"] for h in kept])  # as the search itself does
    return _annotate(kept)


def _annotate(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Clients see UUIDs only: swap the internal keys for the learner's, the fact's, the source
    message's and conversation's and the superseding fact's (only possible with
    include_superseded), in one query — none when the search read them with the hits
    (`public_refs`, PostgreSQL). A hit whose fact was deleted meanwhile is left out."""
    if all("public" in h for h in hits):
        public = {h["fact_id"]: h["public"] for h in hits}
    else:
        rows = Fact.objects.filter(pk__in=[h["fact_id"] for h in hits]).values_list(
            "id", "public_id", "learner__research_id", "superseded_by__public_id", "source_message__public_id",
            "source_message__conversation__public_id")
        public = {row[0]: row[1:] for row in rows}
    out = []
    for hit in hits:
        if hit["fact_id"] not in public:
            continue
        fact_id, learner, superseded_by, message, conversation = public[hit["fact_id"]]
        out.append({**{k: v for k, v in hit.items() if k not in ("learner_id", "public")}, "fact_id": fact_id,
                    "learner": learner,
                    "superseded_by": superseded_by,
                    "source": {**hit["source"], "message_id": message, "conversation_id": conversation}})
    return out
