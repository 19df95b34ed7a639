"""Embeddings (real MiniLM) and entities (real GLiNER checkpoint when built; the span check is
also unit-tested with a clearly FAKE GLiNER stand-in)."""

from __future__ import annotations

import math

import pytest
from django.test import override_settings

from core import llm
from core.llm import assets
from core.llm.providers import gliner as gliner_provider
from telemetry.models import ModelCall

pytestmark = pytest.mark.django_db


def test_minilm_embeddings_are_batched_normalised_and_recorded():
    texts = ["I want to learn Portuguese", "Estou a aprender português", "Quarterly tax filing deadline"]
    with llm.call_context(service="tests.embed") as ctx:
        vectors = llm.embed(texts)
    assert len(vectors) == 3 and {len(v) for v in vectors} == {384}
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-4) for v in vectors)
    cos = lambda a, b: sum(x * y for x, y in zip(a, b, strict=True))  # noqa: E731
    assert cos(vectors[0], vectors[1]) > cos(vectors[0], vectors[2])
    row = ModelCall.objects.get(trace_id=ctx.trace_id)
    assert (row.operation, row.provider, row.status, row.extra["n_texts"]) == ("embeddings", "minilm", "ok", 3)
    assert llm.embed([]) == []
    with pytest.raises(ValueError):
        llm.embed("not a list")


class FakeGLiNER:
    """FAKE stand-in for a GLiNER model: returns scripted spans, some deliberately wrong."""

    def __init__(self, spans):
        self.spans = spans

    def inference(self, texts, labels, threshold=0.5, batch_size=8):  # GLiNER's batched call
        return [self.spans for _ in texts]


def test_spans_that_are_not_exact_substrings_are_dropped_and_counted(monkeypatch):
    text = "I practise Python with my coach Sam before 9am."
    spans = [
        {"start": 11, "end": 17, "text": "Python", "label": "skill", "score": 0.9},
        {"start": 32, "end": 35, "text": "Sam", "label": "person", "score": 0.8},
        {"start": 32, "end": 35, "text": "Samantha", "label": "person", "score": 0.7},  # invented text
        {"start": 40, "end": 99, "text": "before 9am.", "label": "time", "score": 0.6},  # bad offsets
        {"start": 11, "end": 17, "text": "Python", "label": "weapon", "score": 0.6},  # label not asked for
    ]
    monkeypatch.setattr(gliner_provider, "load", lambda model: FakeGLiNER(spans))
    with llm.call_context(service="tests.entities") as ctx:
        found = llm.entities(text, ["skill", "person", "time"])
    assert [(s.text, s.label) for s in found] == [("Python", "skill"), ("Sam", "person")]
    assert all(text[s.start:s.end] == s.text for s in found)
    row = ModelCall.objects.get(trace_id=ctx.trace_id)
    assert row.operation == "entities" and row.extra == {"n_spans": 2, "dropped_spans": 3}


def test_entities_input_checks():
    with pytest.raises(ValueError):
        llm.entities("text", [])
    with pytest.raises(ValueError):
        llm.entities("text", ["skill"], threshold=2)
    assert llm.entities("   ", ["skill"]) == []


def test_missing_entity_model_is_unavailable(tmp_path):
    with override_settings(BLOOM_ENTITY_MODEL=str(tmp_path / "no-such-checkpoint")), \
            pytest.raises(llm.LLMUnavailable, match="bloom_models"):
        llm.entities("I study maths", ["skill"])
    assert ModelCall.objects.get(operation="entities").status == "error"


def test_real_local_gliner_finds_substring_entities():
    if not assets.gliner_model_dir().is_dir():
        pytest.skip(f"local GLiNER not built at {assets.gliner_model_dir()}: run `python manage.py bloom_models`")
    text = "I am learning Portuguese with my coach Sam and I study before 9am."
    found = llm.entities(text, ["skill", "person", "time"], threshold=0.3)
    assert found, "the trained model should find at least one entity here"
    assert all(text[s.start:s.end] == s.text for s in found)
