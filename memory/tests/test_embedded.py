"""Smoke tests for the embedded default (SQLite + filesystem broker): run with `-m embedded`."""

from __future__ import annotations

import pytest
from django.conf import settings

from memory import conf, selectors
from memory.ingest import ingest_facts

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def test_sqlite_ingest_search_and_context(learner):
    if settings.DB_VENDOR != "sqlite":
        pytest.skip("embedded smoke test (run with the SQLite default)")
    r = ingest_facts(learner_id=learner.pk, items=[
        {"fact_type": "barrier", "content": "The learner gets distracted by their phone."},
        {"fact_type": "preference", "content": "The learner prefers studying in the morning."},
        {"fact_type": "preference", "content": "The learner prefers studying in the evening."},
    ], source_agent="test", service="test")
    assert len(r.created) == 3 and len(r.surprises) == 1  # the surprise rule works on SQLite too
    hits = selectors.search_memory(learner_id=learner.pk, query="phone distraction", limit=2)
    assert hits[0]["content"] == "The learner gets distracted by their phone."
    assert hits[0]["parts"]["text"] > 0  # token-overlap text score
    # The same fusion as the PostgreSQL statement (memory/ranking.py).
    parts = hits[0]["parts"]
    assert parts["hubness"] > 0 and hits[0]["score"] == pytest.approx(selectors.fused_score(
        vector_rank=parts["vector_rank"], text_rank=parts["text_rank"], text_share=parts["text_share"],
        length_prior=parts["length_prior"],
        vector=parts["vector"] - conf.SEARCH_HUB_WEIGHT * parts["hubness"]) * parts["decay"], abs=1e-5)
    assert "The learner prefers studying in the evening." in selectors.build_context(learner.pk)
    # Global (staff) search keeps its reciprocal-rank fusion, as the PostgreSQL statement does.
    from memory import ranking

    glob = selectors.search_memory_global(query="phone distraction", limit=2, touch=False)
    top = glob[0]["parts"]
    assert top["text_share"] is None and glob[0]["score"] == pytest.approx(
        (conf.GLOBAL_W_VECTOR * ranking.rrf(top["vector_rank"]) + conf.GLOBAL_W_TEXT * ranking.rrf(top["text_rank"]))
        * top["decay"], abs=1e-6)
