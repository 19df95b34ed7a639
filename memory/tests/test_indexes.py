"""The PostgreSQL indexes the search relies on, as the migrations leave them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import override_settings

from memory import conf

pytestmark = pytest.mark.django_db


def _indexdef(name: str) -> str:
    with connection.cursor() as cur:
        cur.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'memory_fact' AND indexname = %s", [name])
        row = cur.fetchone()
    return row[0] if row else ""


def test_global_vector_index_has_the_graph_memory_conf_names():
    """Migration 0010 and memory.conf (read by the benchmark) name the same HNSW graph."""
    definition = _indexdef("fact_embedding_hnsw")
    assert "USING hnsw (embedding vector_cosine_ops)" in definition
    assert f"m='{conf.HNSW_M}'" in definition and f"ef_construction='{conf.HNSW_EF_CONSTRUCTION}'" in definition


def test_full_text_index_is_on_the_stored_vector():
    assert "USING gin (content_tsv)" in _indexdef("fact_content_tsv")
    assert _indexdef("fact_content_fts") == ""  # the per-row expression index is gone (migration 0009)


def _columns_in_indexes() -> str:
    with connection.cursor() as cur:
        cur.execute("SELECT string_agg(pg_get_indexdef(indexrelid), ' ') FROM pg_index "
                    "WHERE indrelid = 'memory_fact'::regclass")
        return cur.fetchone()[0]


def test_an_access_mark_is_a_hot_update_that_writes_no_index(requires_postgres):
    """A search's access mark (last_accessed_at, access_count) changes no indexed column, and the
    table leaves room on its pages for the new version, so PostgreSQL updates the row in place of
    its page (HOT) with no new entry in any index: before migration 0013 each mark inserted into
    the HNSW graph, the GIN index and every B-tree (memory/README.md, "PostgreSQL's share")."""
    import numpy as np

    from core.identity.models import ApiClient, Learner
    from memory import rules
    from memory.services.access import facts_mark_accessed, facts_mark_accessed_later
    from memory.services.ingest import facts_ingest

    definitions = _columns_in_indexes()
    for column in ("last_accessed_at", "access_count", "tier"):
        assert column not in definitions, column
    with connection.cursor() as cur:
        cur.execute("SELECT reloptions FROM pg_class WHERE oid = 'memory_fact'::regclass")
        assert "fillfactor=80" in (cur.fetchone()[0] or [])

    learner = Learner.objects.create(client=ApiClient.objects.create(name="hot"), display_name="hot")
    vectors = np.random.default_rng(3).normal(size=(2, 384)).tolist()
    ids = facts_ingest(learner_id=learner.pk, facts=[rules.CleanFact("insight", f"Fact {i} " + "word " * 40, 0.7)
                                                     for i in range(2)], embeddings=vectors, service="test").created

    def counts() -> tuple[int, int]:
        with connection.cursor() as cur:  # this transaction's own counts
            cur.execute("SELECT pg_stat_get_xact_tuples_updated('memory_fact'::regclass), "
                        "pg_stat_get_xact_tuples_hot_updated('memory_fact'::regclass)")
            return cur.fetchone()

    before = counts()
    assert facts_mark_accessed(fact_ids=[ids[0]]) == 1
    updated, hot = (a - b for a, b in zip(counts(), before, strict=True))
    assert (updated, hot) == (1, 1)
    # The search's own path: a mark written behind, flushed at once (the same UPDATE as the flusher's).
    before = counts()
    with override_settings(BLOOM_MEMORY_ACCESS_FLUSH_SECONDS=0):
        facts_mark_accessed_later(fact_ids=[ids[1]])
    updated, hot = (a - b for a, b in zip(counts(), before, strict=True))
    assert (updated, hot) == (1, 1)
