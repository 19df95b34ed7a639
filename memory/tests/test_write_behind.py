"""Search access marks written behind by a thread (committed rows: transactional_db), the
read-only search mode, the one-round-trip hybrid query and the query-vector cache."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.llm import embed
from memory import conf, rules, selectors
from memory.models import Fact
from memory.services.access import facts_access_flush
from memory.services.ingest import facts_ingest
from memory.vectors import cosine


def _ingest(learner, contents):
    facts = [rules.CleanFact("insight", c, 0.6) for c in contents]
    return facts_ingest(learner_id=learner.pk, facts=facts, embeddings=embed(list(contents)),
                                 service="test").created


@pytest.mark.django_db(transaction=True)
def test_access_marks_are_written_behind_with_the_read_time(make_learner):
    learner = make_learner()
    ids = _ingest(learner, ["Tom: I play bass in a band called Static Bloom.", "Tom: I had soup for lunch."])
    old = timezone.now() - timedelta(days=40)
    Fact.objects.filter(pk__in=ids).update(last_accessed_at=old)
    with override_settings(BLOOM_MEMORY_ACCESS_FLUSH_SECONDS=0.2):
        before = time.perf_counter()
        hits = selectors.search_memory(learner_id=learner.pk, query="which band does Tom play in", limit=1)
        read_at = timezone.now()
        assert time.perf_counter() - before < 5
        assert Fact.objects.get(pk=hits[0]["fact_id"]).access_count == 0  # not yet: written behind
        selectors.search_memory(learner_id=learner.pk, query="Tom bass band", limit=1)
        deadline = time.time() + 10
        while Fact.objects.get(pk=ids[0]).access_count < 2 and time.time() < deadline:
            time.sleep(0.1)
    fact = Fact.objects.get(pk=ids[0])
    assert fact.access_count == 2  # both reads counted
    assert fact.last_accessed_at <= read_at + timedelta(seconds=5) and fact.last_accessed_at > old
    assert Fact.objects.get(pk=ids[1]).last_accessed_at == old  # not returned, not touched
    # Decay restarts from the read: the next search sees a fresh fact.
    again = selectors.search_memory(learner_id=learner.pk, query="Tom bass band", limit=1, touch=False)
    assert again[0]["parts"]["decay"] == pytest.approx(1.0, abs=1e-3)


@pytest.mark.django_db
def test_touch_false_is_read_only_and_flush_writes_the_buffer(learner):
    ids = _ingest(learner, ["Maya: I passed the DELE B1 exam with 91 percent."])
    selectors.search_memory(learner_id=learner.pk, query="exam result", touch=False)
    assert Fact.objects.get(pk=ids[0]).access_count == 0
    with override_settings(BLOOM_MEMORY_ACCESS_FLUSH_SECONDS=3600):  # the thread will not run first
        selectors.search_memory(learner_id=learner.pk, query="exam result")
        selectors.search_memory(learner_id=learner.pk, query="exam result")
        assert Fact.objects.get(pk=ids[0]).access_count == 0
        assert facts_access_flush() == 1
    assert Fact.objects.get(pk=ids[0]).access_count == 2


@pytest.mark.django_db(transaction=True)
def test_a_flush_never_waits_for_a_fact_another_transaction_holds(make_learner):
    """A delete (forgetting a learner) holding a fact's row must not make the flush wait: waiting
    deadlocked the two when each held a row the other wanted. The free fact is marked; the held
    one's mark is dropped, and nothing blocks."""
    import threading

    from django.db import connections, transaction

    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL")
    learner = make_learner()
    held, free = _ingest(learner, ["Ana: I practise scales every morning.", "Ana: My teacher is called Rui."])
    locked, release = threading.Event(), threading.Event()

    def hold_row():
        with transaction.atomic(using="default"):
            list(Fact.objects.select_for_update().filter(pk=held))
            locked.set()
            release.wait(20)
        connections["default"].close()

    holder = threading.Thread(target=hold_row)
    holder.start()
    try:
        assert locked.wait(10)
        with override_settings(BLOOM_MEMORY_ACCESS_FLUSH_SECONDS=3600):
            from memory.services.access import facts_mark_accessed_later

            facts_mark_accessed_later(fact_ids=[held, free])
            started = time.perf_counter()
            assert facts_access_flush() == 1
            assert time.perf_counter() - started < 5
    finally:
        release.set()
        holder.join(20)
    assert Fact.objects.get(pk=free).access_count == 1
    assert Fact.objects.get(pk=held).access_count == 0


@pytest.mark.django_db
def test_hybrid_is_one_query_and_its_parts_add_up(learner):
    ids = _ingest(learner, ["Maya: We adopted a beagle called Biscuit.", "Tom: My sister moved to Berlin.",
                            "Maya: Biscuit learned to roll over this week."])
    Fact.objects.filter(pk=ids[1]).update(last_accessed_at=timezone.now() - timedelta(days=10))
    qvec = selectors.embed_query("what trick did the beagle learn")
    with CaptureQueriesContext(connection) as ctx:
        hits = selectors.search_memory(learner_id=learner.pk, query="what trick did the beagle learn", limit=3,
                                       touch=False, query_embedding=qvec)
    assert len(ctx.captured_queries) == 1
    assert {h["fact_id"] for h in hits} == set(ids)
    now = timezone.now()
    for h in hits:
        fact = Fact.objects.get(pk=h["fact_id"])
        cos = cosine(fact.embedding, qvec)
        assert h["parts"]["vector"] == pytest.approx(max(0.0, cos), abs=1e-4)
        assert h["parts"]["decay"] == pytest.approx(rules.decay_score(fact.last_accessed_at, now), abs=1e-3)
        assert h["parts"]["hubness"] == pytest.approx(fact.hubness, abs=1e-6)
        assert h["score"] == pytest.approx(selectors.fused_score(
            vector_rank=h["parts"]["vector_rank"], text_rank=h["parts"]["text_rank"],
            vector=cos - conf.SEARCH_HUB_WEIGHT * fact.hubness, text_share=h["parts"]["text_share"],
            length_prior=h["parts"]["length_prior"])
            * h["parts"]["decay"], abs=1e-5)
        assert h["parts"]["text"] >= 0.0 and (h["parts"]["text"] > 0) == (h["parts"]["text_rank"] is not None)
    assert sorted(h["parts"]["vector_rank"] for h in hits) == [1, 2, 3]  # every fact is a vector candidate
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_query_vectors_are_cached_per_text():
    selectors._query_cache.clear()
    first = selectors.embed_query("how is the dog doing?")
    assert len(selectors._query_cache) == 1
    started = time.perf_counter()
    second = selectors.embed_query("how is the dog doing?")
    assert time.perf_counter() - started < 0.005 and second == first and second is not first
    assert selectors.embed_query("how is the cat doing?") != first


def test_minilm_direct_path_matches_sentence_transformers_encode():
    from core.llm.providers import minilm

    encoder = minilm.load()
    assert minilm._mean_pooling_pipeline(encoder)
    texts = ["What trick did Maya's beagle learn?", "ok", "A much longer sentence, with punctuation, numbers "
             "like 42 and a name such as Biscuit, to exercise padding."]
    direct = minilm._encode_direct(encoder, texts)
    reference = encoder.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    assert ((direct * reference).sum(axis=1) > 0.9999).all()
