"""Direct ingest (REST API and MCP): validate strictly, embed, store through services.facts_ingest.
No chat model: text is stored as passages, split at sentence boundaries (≤ 500 chars each)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from bloom.llm import call_context, embed
from memory import rules
from memory.services import IngestResult, facts_ingest


def ingest_facts(*, learner_id: int, items: list[dict[str, Any]], source_agent: str, service: str) -> IngestResult:
    """Each item: fact_type, content, confidence (optional), embedding (optional, 384 finite numbers).
    Any invalid item rejects the whole request (MemoryInputError) before anything is written."""
    facts = [rules.validate_fact({"confidence": 0.8, **item}, strict=True) for item in items]
    given = [rules.validate_embedding(item["embedding"], dim=settings.EMBEDDING_DIM)
             if item.get("embedding") is not None else None for item in items]
    missing = [i for i, v in enumerate(given) if v is None]
    if missing:
        with call_context(service=service, learner_id=learner_id):
            vectors = embed([facts[i].content for i in missing])
        for i, v in zip(missing, vectors, strict=True):
            given[i] = v
    return facts_ingest(learner_id=learner_id, facts=facts, embeddings=given, source_agent=source_agent,
                        service=service)


def ingest_text(*, learner_id: int, text: str, fact_type: str = "insight", source_agent: str,
                service: str) -> IngestResult:
    chunks = rules.chunk_text(text)
    if not chunks:
        raise rules.MemoryInputError("text is empty", code="invalid_content", field="text")
    return ingest_facts(learner_id=learner_id, items=[{"fact_type": fact_type, "content": c} for c in chunks],
                        source_agent=source_agent, service=service)
