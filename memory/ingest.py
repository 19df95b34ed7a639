"""Direct ingest (REST API, batch endpoint and MCP): validate strictly, embed, store through
memory.services.ingest.facts_ingest. No chat model: text is stored as passages, split at sentence boundaries
(≤ 500 chars each)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.errors import ApplicationError
from core.llm import call_context, embed
from memory import rules
from memory.services.ingest import IngestExtra, IngestResult, facts_ingest

EXTERNAL_ID_MAX_CHARS = 200
METADATA_MAX_BYTES = 4096  # metadata is a label set for filtering and reconciling, not a document


def ingest_facts(*, learner_id: int, items: list[dict[str, Any]], source_agent: str, service: str) -> IngestResult:
    """Each item: fact_type, content, confidence (optional), embedding (optional, 384 finite numbers),
    occurred_at (optional, ISO 8601 or datetime), external_id (optional), metadata (optional object).
    Any invalid item rejects the whole request (ApplicationError naming the item) before anything
    is written. Embeddings of the items without one are computed in one batched call."""
    facts, extras, given = [], [], []
    for n, item in enumerate(items):
        try:
            facts.append(rules.validate_fact({"confidence": 0.8, **item}, strict=True))
            extras.append(_extra(item))
            given.append(rules.validate_embedding(item["embedding"], dim=settings.EMBEDDING_DIM)
                         if item.get("embedding") is not None else None)
        except ApplicationError as exc:
            if len(items) == 1:
                raise
            raise ApplicationError(f"item {n}: {exc}", code=exc.code,
                                   field=f"items[{n}].{exc.field}" if exc.field else f"items[{n}]") from None
    missing = [i for i, v in enumerate(given) if v is None]
    if missing:
        with call_context(service=service, learner_id=learner_id):
            vectors = embed([facts[i].content for i in missing])
        for i, v in zip(missing, vectors, strict=True):
            given[i] = v
    return facts_ingest(learner_id=learner_id, facts=facts, embeddings=given, source_agent=source_agent,
                        service=service, extras=extras)


def _extra(item: dict[str, Any]) -> IngestExtra:
    occurred = item.get("occurred_at")
    if occurred is not None and not isinstance(occurred, datetime):
        parsed = parse_datetime(occurred) if isinstance(occurred, str) else None
        if parsed is None:
            raise ApplicationError("occurred_at must be an ISO 8601 date-time", code="invalid_occurred_at",
                                   field="occurred_at")
        occurred = parsed
    if occurred is not None and timezone.is_naive(occurred):
        occurred = timezone.make_aware(occurred, timezone.utc)
    external_id = item.get("external_id") or ""
    if not isinstance(external_id, str) or len(external_id) > EXTERNAL_ID_MAX_CHARS:
        raise ApplicationError(f"external_id must be a string of at most {EXTERNAL_ID_MAX_CHARS} characters",
                               code="invalid_external_id", field="external_id")
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ApplicationError("metadata must be an object", code="invalid_metadata", field="metadata")
    try:
        size = len(json.dumps(metadata, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError):
        raise ApplicationError("metadata must be JSON", code="invalid_metadata", field="metadata") from None
    if size > METADATA_MAX_BYTES:
        raise ApplicationError(f"metadata is larger than {METADATA_MAX_BYTES} bytes", code="invalid_metadata",
                               field="metadata")
    return IngestExtra(occurred_at=occurred, external_id=external_id.strip(), metadata=metadata)


def ingest_text(*, learner_id: int, text: str, fact_type: str = "insight", source_agent: str,
                service: str) -> IngestResult:
    chunks = rules.chunk_text(text)
    if not chunks:
        raise ApplicationError("text is empty", code="invalid_content", field="text")
    return ingest_facts(learner_id=learner_id, items=[{"fact_type": fact_type, "content": c} for c in chunks],
                        source_agent=source_agent, service=service)
