"""Memory tunables. Each reads a Django setting of the same name when present (so a deployment can
override it in the environment-driven settings module) and otherwise uses the documented default.

The boundary between code and model: every number here is decided by code. The model only writes
fact text (extraction) and summary prose; GLiNER only points at spans."""

from __future__ import annotations

from typing import Any

from django.conf import settings


def _get(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def summary_threshold() -> int:
    return int(_get("BLOOM_SUMMARY_THRESHOLD", 5))


def archive_after_days() -> int:
    return int(_get("BLOOM_ARCHIVE_AFTER_DAYS", 30))


# Facts longer than this are rejected by the API (400) and truncated from model output.
FACT_MAX_CHARS = 500
# A search query longer than this is a 400 (a 10 KB query is a mistake, not a question).
QUERY_MAX_CHARS = 2000
SEARCH_MAX_LIMIT = 50
# Confidence the extractor assigns when the model gives a non-numeric one ("high", null, NaN).
DEFAULT_CONFIDENCE = 0.5
# At most this many facts from one message: a small model sometimes lists every sentence.
MAX_FACTS_PER_MESSAGE = 5


def dedup_cosine() -> float:
    """Cosine at or above which a new fact is "the same" as an older one (strengthens it)."""
    return float(_get("BLOOM_MEMORY_DEDUP_COSINE", 0.90))


def surprise_cosine() -> float:
    """Cosine at or above which a conflicting new fact is flagged as a surprise (see rules)."""
    return float(_get("BLOOM_MEMORY_SURPRISE_COSINE", 0.75))


def access_flush_seconds() -> float:
    """How often search access marks are written behind (services.facts_mark_accessed_later);
    0 = written in the search itself."""
    return float(_get("BLOOM_MEMORY_ACCESS_FLUSH_SECONDS", 1.0))


def search_second_hop() -> bool:
    """Entity-linked second hop in learner search (selectors._second_hop). On: on the
    long-conversation benchmark it raised multi-hop recall@10 from 0.622 to 0.707 (all 0.526 ->
    0.550, no category lower) for +6.5 ms p50 (one more query, only when a top hit names someone)."""
    value = _get("BLOOM_MEMORY_SEARCH_SECOND_HOP", True)
    return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes", "on")


# Decay: max(FLOOR, exp(-LAMBDA * days since last access)) — the field note's constants.
DECAY_LAMBDA = 0.05
DECAY_FLOOR = 0.3
# Tier thresholds on the decay score: hot ≥ 0.7 (about a week), warm ≥ 0.4 (about 18 days),
# cold below. Cold facts stay searchable; they just rank lower.
TIER_HOT_MIN = float(getattr(settings, "BLOOM_MEMORY_TIER_HOT_MIN", 0.7))
TIER_WARM_MIN = float(getattr(settings, "BLOOM_MEMORY_TIER_WARM_MIN", 0.4))

# Read path bounds: at most this many facts, none older than this many days.
CONTEXT_MAX_FACTS = int(getattr(settings, "BLOOM_CONTEXT_MAX_FACTS", 12))
CONTEXT_MAX_DAYS = int(getattr(settings, "BLOOM_CONTEXT_MAX_DAYS", 90))
CONTEXT_SUMMARY_MAX_CHARS = 1200

# Hybrid score weights (vector similarity, full-text); the sum is then scaled by decay.
SEARCH_W_VECTOR = 0.7
SEARCH_W_TEXT = 0.3
# pgvector HNSW: m=16, ef_construction=64 (migration); ef_search used for global queries.
HNSW_EF_SEARCH = int(getattr(settings, "BLOOM_HNSW_EF_SEARCH", 100))

EXTRACTION_CONTEXT_MESSAGES = 4
EXTRACTION_MAX_TOKENS = 220
SUMMARY_MAX_TOKENS = 160


def entity_labels() -> list[str]:
    from core.llm.assets import ENTITY_LABELS

    labels = _get("BLOOM_ENTITY_LABELS", None)
    if isinstance(labels, str):
        labels = [x.strip() for x in labels.split(",") if x.strip()]
    return list(labels or ENTITY_LABELS)


def entity_threshold() -> float | None:
    """None = the threshold stored with the entity model (chosen on a validation split)."""
    value = _get("BLOOM_ENTITY_THRESHOLD", None)
    return None if value in (None, "") else float(value)
