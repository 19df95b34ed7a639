"""Entities with the real GLiNER model (skips, with the reason, until `bloom_models` has trained
it): every stored mention is an exact substring of its fact, whatever the model returns."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.llm import entities
from memory import conf, rules, tasks
from memory.models import Entity, EntityRun, Fact, Mention
from memory.tests.test_services import ingest

pytestmark = pytest.mark.django_db

SAMPLES = [
    "The learner uses Anki to prepare for the DELE B2 exam in Madrid.",
    "My coach Sam recommended the Python course on Coursera before 9am.",
    "The learner practices Clair de Lune with Mrs. Okafor every Sunday.",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_real_gliner_spans_validate_against_source(gliner_model, text):
    spans = entities(text, conf.entity_labels(), threshold=0.3)
    kept, dropped = rules.validate_spans(text, list(spans), labels=conf.entity_labels())
    assert len(kept) + dropped == len(spans)
    for sp in kept:
        assert text[sp.start:sp.end] == sp.text


# Random text around real words: GLiNER sees odd whitespace, unicode and punctuation.
noisy_text = st.lists(st.one_of(st.sampled_from(["Anki", "Python", "Madrid", "Sam", "exam", "  ", "é", "\u00a0",
                                                 "DELE", "Coursera", ".", ","]), st.text(max_size=6)),
                      min_size=1, max_size=12).map(" ".join)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=noisy_text)
def test_property_no_stored_mention_outside_its_fact(gliner_model, learner, text):
    text = rules.clean_text(text)[:500]
    if not text:
        return
    fact = Fact.objects.create(learner=learner, fact_type="insight", content=text,
                               content_hash=rules.content_hash(text + str(Fact.objects.count())),
                               last_accessed_at="2026-11-30T00:00:00Z")
    tasks.extract_entities(fact.pk)
    assert EntityRun.objects.filter(fact=fact).exists()
    for m in Mention.objects.filter(fact=fact):
        assert fact.content[m.start:m.end] == m.text


def test_extract_entities_task_builds_graph(gliner_model, learner):
    """Wiring, not model quality: the task stores exactly the validated spans of the real model's
    answer (deterministic for a fixed checkpoint), canonicalised, with relations between them."""
    fid = ingest(learner, "The learner uses Anki and Duolingo to study Spanish for the DELE exam.",
                 fact_type="insight").created[0]
    text = Fact.objects.get(pk=fid).content
    expected, dropped = rules.validate_spans(text, list(entities(text, conf.entity_labels(),
                                                                 threshold=conf.entity_threshold())),
                                             labels=conf.entity_labels())
    out = tasks.extract_entities([fid])
    assert out == {"facts": 1, "kept": len(expected), "dropped": dropped, "skipped": 0, "failed": 0}
    stored = sorted(Mention.objects.filter(fact_id=fid).values_list("start", "end", "text"))
    assert stored == sorted((sp.start, sp.end, sp.text) for sp in expected)
    canon = {(rules.canonical_entity(sp.text), sp.label) for sp in expected}
    assert set(Entity.objects.filter(learner=learner).values_list("canonical_name", "label")) == canon
    assert tasks.extract_entities([fid]) is None and tasks.extract_entities(fid) is None  # idempotent
