"""Memory tunables. The ones a deployment may change are settings, parsed once with the others in
bloom/settings.py (a bad value stops start-up) and documented in the README's configuration
table; the accessors below read them from django.conf.settings on every call, so a changed
setting (a test's override) applies at once. The rest are constants of the code.

The boundary between code and model: every number here is decided by code. The model only writes
fact text (extraction) and summary prose; GLiNER only points at spans."""

from __future__ import annotations

from django.conf import settings


def summary_threshold() -> int:
    return settings.BLOOM_SUMMARY_THRESHOLD


def archive_after_days() -> int:
    return settings.BLOOM_ARCHIVE_AFTER_DAYS


def extraction_model() -> str:
    """The model that extracts facts ("provider:model", BLOOM_EXTRACTION_LLM; BLOOM_LLM when unset)."""
    from core.llm import job_model

    return job_model("extraction")


def summary_model() -> str:
    """The model that writes summaries (BLOOM_SUMMARY_LLM; BLOOM_LLM when unset)."""
    from core.llm import job_model

    return job_model("summary")


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
    return settings.BLOOM_MEMORY_DEDUP_COSINE


def surprise_cosine() -> float:
    """Cosine at or above which a conflicting new fact is flagged as a surprise (memory.comparison)."""
    return settings.BLOOM_MEMORY_SURPRISE_COSINE


def access_flush_seconds() -> float:
    """How often search access marks are written behind (services.access.facts_mark_accessed_later);
    0 = written in the search itself."""
    return settings.BLOOM_MEMORY_ACCESS_FLUSH_SECONDS


# Decay: max(FLOOR, exp(-LAMBDA * days since last access)). About two weeks without a read halves
# a fact's weight; the floor keeps a long-unread fact findable (it ranks lower, it is not lost).
DECAY_LAMBDA = 0.05
DECAY_FLOOR = 0.3
# Tier thresholds on the decay score: hot ≥ 0.7 (about a week), warm ≥ 0.4 (about 18 days),
# cold below. Cold facts stay searchable; they just rank lower. Read once, at import.
TIER_HOT_MIN: float = settings.BLOOM_MEMORY_TIER_HOT_MIN
TIER_WARM_MIN: float = settings.BLOOM_MEMORY_TIER_WARM_MIN

# Read path bounds: at most this many facts, none older than this many days. Read once, at import.
CONTEXT_MAX_FACTS: int = settings.BLOOM_CONTEXT_MAX_FACTS
CONTEXT_MAX_DAYS: int = settings.BLOOM_CONTEXT_MAX_DAYS
CONTEXT_SUMMARY_MAX_CHARS = 1200

# How a learner search scores its candidates (memory/ranking.py, memory/README.md "Ranking,
# seventeenth round" and "eighteenth round"): "mix" = 1 + SEARCH_W_VECTOR x (cosine - SEARCH_HUB_WEIGHT x hubness) +
# SEARCH_W_TEXT x (BM25 / the query's BM25 ceiling) + SEARCH_W_LENGTH x the length prior;
# "rrf" = each side's weight / (RRF_K + rank).
# The mix 1 / 0.5 with hubness 0.5 was the one of four mixes that lost on neither long-conversation
# set against the reciprocal-rank fusion it replaced (0.9 / 0.1, hubness 0.75): LoCoMo dev
# recall@10 0.626 -> 0.682, the generated set 0.876 -> 0.877; the length prior in place of hubness
# then 0.682 -> 0.714 and 0.879 -> 0.910. Global (staff) search keeps "rrf":
# its text side is ts_rank_cd, which has no ceiling. 0 switches a side off (the ablation of
# bench/bench_memory_longconv.py).
SEARCH_FUSION = "mix"
SEARCH_W_VECTOR = 1.0
SEARCH_W_TEXT = 0.5
# A prior on length (ranking.length_prior, README "Ranking, eighteenth round"): + SEARCH_W_LENGTH x
# ln(the fact's words) / ln(the learner's average). It replaced hubness in the learner's search.
SEARCH_W_LENGTH = 0.2
# Hubness reduction (memory/hubness.py): a fact's vector score is its cosine to the query minus
# SEARCH_HUB_WEIGHT x its hubness, the mean cosine to its SEARCH_HUB_K nearest other facts of the
# learner (README "Hubness" for k). Off in the learner's search since the length prior (which lifts
# the generated set as hubness did, without costing LoCoMo what hubness cost it); global search keeps
# GLOBAL_HUB_WEIGHT, so hubness is still kept up to date for every fact.
SEARCH_HUB_K = 3
SEARCH_HUB_WEIGHT = 0.0
# Global (staff) search, reciprocal-rank fusion of the HNSW side and ts_rank_cd as it has been: not
# measured against the mix (its text side has no ceiling), so not changed with it.
GLOBAL_W_VECTOR = 0.9
GLOBAL_W_TEXT = 0.1
GLOBAL_HUB_WEIGHT = 0.75
# pgvector HNSW: m=32, ef_construction=128 (migration 0010, measured at 1M facts); ef_search used
# for global queries.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 128
HNSW_EF_SEARCH: int = settings.BLOOM_HNSW_EF_SEARCH

EXTRACTION_CONTEXT_MESSAGES = 4
EXTRACTION_MAX_TOKENS = 220
SUMMARY_MAX_TOKENS = 160


def entity_labels() -> list[str]:
    """The labels GLiNER is asked for: BLOOM_ENTITY_LABELS, or (empty) the entity model's own."""
    from core.llm.assets import ENTITY_LABELS

    return list(settings.BLOOM_ENTITY_LABELS or ENTITY_LABELS)


def entity_threshold() -> float | None:
    """None = the threshold stored with the entity model (chosen on a validation split)."""
    return settings.BLOOM_ENTITY_THRESHOLD
