"""The PostgreSQL indexes the search relies on, as the migrations leave them."""

from __future__ import annotations

import pytest
from django.db import connection

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
