"""A model per job: fact extraction runs on BLOOM_EXTRACTION_LLM and summaries on BLOOM_SUMMARY_LLM,
each falling back to BLOOM_LLM when unset; the telemetry row and the stored run name the model
used. Control flow with the SCRIPTED FAKE chat provider (two fake model names stand for two
models); one test runs extraction on the real 1.5B through the real model server."""

from __future__ import annotations

import json

import pytest
from django.apps import apps
from django.test import override_settings

from core.env import ModelSpec
from core.llm import assets
from memory import tasks
from memory.models import ExtractionRun, Fact, Summary

pytestmark = pytest.mark.django_db

FACTS = json.dumps({"facts": [{"fact_type": "preference", "content": "The learner studies best at night.",
                               "confidence": 0.9}]})


def _model_calls():
    return apps.get_model("telemetry", "ModelCall").objects


def test_extraction_uses_its_own_model_when_set(fake_chat, learner, make_message):
    msg = make_message(learner, "I study best at night.")
    fake_chat.push(FACTS)
    with override_settings(BLOOM_EXTRACTION_LLM=ModelSpec("fake", "fake-extraction-model")):
        out = tasks.extract_facts(msg.pk)
    assert out["status"] == "ok" and len(out["created"]) == 1
    assert [r.model for r in fake_chat.requests] == ["fake-extraction-model"]
    assert ExtractionRun.objects.get(message=msg).model == "fake-extraction-model"
    assert list(_model_calls().filter(provider="fake").values_list("request_model", flat=True)) == \
        ["fake-extraction-model"]


def test_extraction_falls_back_to_bloom_llm_when_unset(fake_chat, learner, make_message):
    msg = make_message(learner, "I study best at night.")
    fake_chat.push(FACTS)
    with override_settings(BLOOM_EXTRACTION_LLM=None):
        tasks.extract_facts(msg.pk)
    assert [r.model for r in fake_chat.requests] == ["scripted"]  # the fixture's BLOOM_LLM


def test_summaries_use_their_own_model_when_set(fake_chat, learner, settings):
    from memory.tests.test_services import ingest

    settings.BLOOM_SUMMARY_THRESHOLD = 2
    for text in ("The learner studies at night.", "The learner plays the cello."):
        ingest(learner, text)
    fake_chat.push("A learner who studies at night and plays the cello.")
    with override_settings(BLOOM_SUMMARY_LLM=ModelSpec("fake", "fake-summary-model"),
                           BLOOM_EXTRACTION_LLM=ModelSpec("fake", "fake-extraction-model")):
        out = tasks.summarize(learner.pk)
    assert out is not None and out["facts"] == 2
    assert [r.model for r in fake_chat.requests] == ["fake-summary-model"]
    assert Summary.objects.get(learner=learner).model == "fake-summary-model"
    assert _model_calls().get(provider="fake").request_model == "fake-summary-model"


LARGER = "qwen2.5-coder-1.5b-instruct-q4"


@pytest.mark.slow
def test_extraction_really_runs_on_the_larger_model_when_configured(embedded_model_server, learner, make_message):
    """The real 1.5B, through the real model server, as BLOOM_EXTRACTION_LLM while chat stays on
    BLOOM_LLM: the model server answers as the 1.5B and the fact is stored from its output."""
    if embedded_model_server is None:
        pytest.skip("no embedded model server (BLOOM_TEST_MODEL_SERVER=external)")
    assert assets.chat_model_path(LARGER).is_file(), "run `manage.py bloom_models` (make test does)"
    msg = make_message(learner, "I'm preparing for the IELTS exam in May and I focus best early in the morning.")
    with override_settings(BLOOM_LLM=ModelSpec("openai", assets.DEFAULT_CHAT_MODEL),
                           BLOOM_EXTRACTION_LLM=ModelSpec("openai", LARGER), BLOOM_LLM_RETRIES=0):
        out = tasks.extract_facts(msg.pk)
    assert out["status"] == "ok", out
    row = _model_calls().get(provider="openai")
    assert row.status == "ok" and row.request_model == LARGER and row.output_tokens > 5
    assert ExtractionRun.objects.get(message=msg).model == LARGER
    contents = " ".join(Fact.objects.filter(learner=learner).values_list("content", flat=True)).lower()
    assert "ielts" in contents or "morning" in contents, contents


def test_the_reader_uses_the_small_model_beside_the_embedded_default_and_follows_any_other(settings):
    """Under the embedded default chat model (the 1.5B) the reader's proposals go to the 0.5B served
    beside it; a deployment that names its own chat model gets it for reading too, unless
    BLOOM_READING_LLM says otherwise."""
    from core.env import DEFAULT_LLM, DEFAULT_READING_LLM
    from core.llm import job_model

    provider, name = DEFAULT_LLM.split(":", 1)
    settings.BLOOM_LLM, settings.BLOOM_READING_LLM = ModelSpec(provider, name), None
    assert (job_model("chat"), job_model("reading")) == (DEFAULT_LLM, DEFAULT_READING_LLM)
    assert job_model("extraction") == DEFAULT_LLM
    settings.BLOOM_LLM = ModelSpec("ollama", "qwen2.5:3b")
    assert job_model("reading") == "ollama:qwen2.5:3b"
    settings.BLOOM_READING_LLM = ModelSpec("openai", "reader-on-vllm")
    assert job_model("reading") == "openai:reader-on-vllm"
