"""Hubness (memory/hubness.py): the pure arithmetic, what ingest keeps, the exact refresh, and
what it does for search, with the real database and the real MiniLM embeddings."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest
from django.apps import apps as django_apps

from core.llm import embed
from memory import conf, hubness, rules, selectors, tasks
from memory.batch import ingest_batch
from memory.models import Fact
from memory.services import dedup
from memory.services.forget import fact_delete
from memory.services.hubness import hubness_refresh
from memory.services.ingest import facts_ingest
from memory.vectors import as_array

LONGCONV = Path(__file__).resolve().parent.parent / "eval_data" / "longconv_v1.json"


def _unit_rows(n: int, seed: int = 3) -> np.ndarray:
    mat = np.random.default_rng(seed).normal(size=(n, 16)).astype(np.float32)
    return mat / np.linalg.norm(mat, axis=1, keepdims=True)


def test_hubness_is_the_mean_of_the_k_largest_and_skips_the_same_text():
    assert hubness.hubness_of([0.9, 0.5, 0.7, 0.2, 0.99995], k=3) == pytest.approx(0.7)  # 0.9, 0.7, 0.5
    assert hubness.hubness_of([0.3], k=3) == pytest.approx(0.3)
    assert hubness.hubness_of([]) == 0.0  # a learner's first fact has no neighbour
    assert hubness.hubness_of([0.9, 0.6, 0.3]) == pytest.approx(0.6)


def _brute_top(mat: np.ndarray, k: int) -> list[list[float]]:
    """Each row's k largest cosines to the other rows, the same text left out: the definition."""
    sims = mat @ mat.T
    return [sorted((float(sims[i, j]) for j in range(len(mat)) if j != i and sims[i, j] < hubness.SAME_TEXT_COSINE),
                   reverse=True)[:k] for i in range(len(mat))]


@pytest.mark.parametrize("n", [1, 2, 9, 20])
def test_exact_hubness_matches_brute_force(n, monkeypatch):
    monkeypatch.setattr(hubness, "_BLOCK", 7)  # several blocks, one of them partial
    mat = _unit_rows(n)
    if n > 2:
        mat[1] = mat[0]  # the same text twice: not a neighbour of its twin
    got = hubness.exact_hubness(mat, k=3)
    for i, top in enumerate(_brute_top(mat, 3)):
        assert got[i] == pytest.approx(float(np.mean(top)) if top else 0.0, abs=1e-5)


def test_ingest_looks_at_enough_neighbours_to_keep_hubness():
    assert dedup.NEIGHBOURS >= conf.SEARCH_HUB_K


def _ingest_one_by_one(learner, contents):
    for c in contents:
        facts_ingest(learner_id=learner.pk, facts=[rules.CleanFact("insight", c, 0.8)], embeddings=embed([c]),
                     source_agent="test", service="test")


def _brute(learner_id: int) -> dict[int, list[float]]:
    """Each live fact's k largest cosines to the learner's other live facts, from the stored vectors."""
    rows = list(Fact.objects.filter(learner_id=learner_id, superseded_by__isnull=True)
                .order_by("pk").values_list("pk", "embedding"))
    mat = np.vstack([as_array(v) for _, v in rows])
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    return dict(zip([pk for pk, _ in rows], _brute_top(mat, conf.SEARCH_HUB_K), strict=True))


def _exact(learner_id: int) -> dict[int, float]:
    return {pk: float(np.mean(top)) if top else 0.0 for pk, top in _brute(learner_id).items()}


def _stored(learner_id: int) -> dict[int, float]:
    return dict(Fact.objects.filter(learner_id=learner_id, superseded_by__isnull=True).values_list("pk", "hubness"))


def _all_exact(learner_id: int) -> bool:
    stored, exact = _stored(learner_id), _exact(learner_id)
    return stored.keys() == exact.keys() and all(abs(stored[pk] - h) < 1e-5 for pk, h in exact.items())


SIX = ["Maya: I adopted a dachshund from the shelter on Saturday.",
       "Maya: Traffic was awful on the way home.",
       "Maya: My new obsession is linocut printing.",
       "Tom: The bus was so full I had to wait for the next one.",
       "Tom: I planted tomatoes on the balcony this weekend.",
       "Tom: My sister is moving to Dublin for work."]


def test_a_new_fact_gets_its_exact_hubness_and_older_facts_are_not_rewritten(learner):
    for n, content in enumerate(SIX, start=1):
        before = _stored(learner.pk)
        _ingest_one_by_one(learner, [content])
        new = Fact.objects.filter(learner=learner).latest("pk")
        top = _brute(learner.pk)[new.pk]
        assert len(top) == min(n - 1, conf.SEARCH_HUB_K)
        assert new.hubness == pytest.approx(np.mean(top) if n > 1 else 0.0, abs=1e-5)
        # Ingest does not rewrite older rows (README "Hubness": it halved the ingest rate).
        assert {pk: h for pk, h in _stored(learner.pk).items() if pk != new.pk} == before


def test_facts_of_one_batch_count_each_other(learner):
    ingest_batch(learner_id=learner.pk, items=[{"fact_type": "insight", "content": c} for c in SIX],
                 source_agent="test", service="test")
    assert len(_stored(learner.pk)) == 6 and _all_exact(learner.pk)


def test_refresh_makes_every_fact_exact(learner):
    _ingest_one_by_one(learner, SIX)
    assert not _all_exact(learner.pk)  # older facts do not count the newer ones yet
    assert hubness_refresh(learner_id=learner.pk) > 0
    assert _all_exact(learner.pk)
    fact_delete(fact_id=Fact.objects.filter(learner=learner).order_by("pk").first().pk)
    assert not _all_exact(learner.pk)  # the others still count the deleted fact
    assert hubness_refresh(learner_id=learner.pk) > 0
    assert _all_exact(learner.pk)
    assert hubness_refresh(learner_id=learner.pk) == 0  # nothing left to change


def test_daily_consolidation_recomputes_hubness(learner):
    _ingest_one_by_one(learner, SIX)
    Fact.objects.filter(learner=learner).update(hubness=0.99)
    tasks.consolidate()
    assert _all_exact(learner.pk)


def test_migration_computes_the_hubness_of_existing_facts(learner):
    _ingest_one_by_one(learner, SIX)
    Fact.objects.filter(learner=learner).update(hubness=0.0)
    migration = importlib.import_module("memory.migrations.0012_fact_hubness")
    migration.compute_existing(django_apps, None)
    assert _all_exact(learner.pk)
    assert all(Fact.objects.filter(learner=learner).values_list("hubness", flat=True))


def test_the_length_prior_finds_more_inference_evidence_in_a_long_conversation(learner, monkeypatch):
    """One conversation of the long-conversation benchmark (~530 turns): its inference questions
    ("Is Maya a creative person?" / "My new obsession is linocut printing...") find more of their
    evidence in the top 10 with the length prior than without it (short turns of small talk sit
    near every such question). Hubness did this before the length prior replaced it in the
    learner's search; the check fails if the prior is not computed or not added."""
    conv = json.loads(LONGCONV.read_text())["conversations"][0]
    texts = [rules.clean_text(f"{t['speaker']}: {t['text']}") for t in conv["turns"]]
    vectors = embed(texts)
    for start in range(0, len(texts), 100):
        ingest_batch(learner_id=learner.pk, items=[{"fact_type": "insight", "content": c, "embedding": v}
                                                   for c, v in zip(texts[start:start + 100],
                                                                   vectors[start:start + 100], strict=True)],
                     source_agent="test", service="test")
    by_hash = {rules.content_hash(t): t for t in texts}
    turn_text = {t["id"]: text for t, text in zip(conv["turns"], texts, strict=True)}
    questions = [q for q in conv["questions"] if q["category"] == "inference"]

    def found(weight: float) -> int:
        monkeypatch.setattr(conf, "SEARCH_W_LENGTH", weight)
        hits = 0
        for q in questions:
            top = {by_hash.get(h) for h in Fact.objects.filter(pk__in=[
                r["fact_id"] for r in selectors.search_memory(learner_id=learner.pk, query=q["question"],
                                                              limit=10, touch=False)])
                   .values_list("content_hash", flat=True)}
            hits += sum(1 for e in q["evidence"] if turn_text[e] in top)
        return hits

    default = conf.SEARCH_W_LENGTH
    plain, with_prior = found(0.0), found(default)
    assert with_prior > plain, (plain, with_prior, len(questions))
