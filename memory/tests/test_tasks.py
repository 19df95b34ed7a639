"""Background tasks. Control flow with the scripted FAKE chat (clearly named); the behaviour that
depends on the model runs through a real Celery worker with the real local LLM and MiniLM."""

from __future__ import annotations

import json
import time

import pytest
from django.apps import apps
from django.db import transaction

from core.llm import LLMUnavailable
from core.outbox.models import OutboxMessage
from core.outbox.services import outbox_enqueue
from memory import tasks
from memory.models import ExtractionRun, Fact, Summary

pytestmark = pytest.mark.django_db


def facts_json(*items):
    return json.dumps({"facts": [{"fact_type": t, "content": c, "confidence": conf} for t, c, conf in items]})


def test_extract_facts_writes_validated_facts_once(fake_chat, learner, make_message):
    msg = make_message(learner, "I study best in the morning but my phone distracts me.")
    fake_chat.push(facts_json(("preference", "The learner studies best in the morning.", 0.9),
                              ("barrier", "The learner is distracted by their phone.", "high"),
                              ("insight", "   ", 0.5)))  # empty after cleaning: dropped
    out = tasks.extract_facts(msg.pk)
    assert out["status"] == "ok" and len(out["created"]) == 2 and out["dropped"] == 1
    facts = {f.fact_type: f for f in Fact.objects.filter(learner=learner)}
    assert facts["barrier"].confidence == 0.5  # "high" → documented default
    assert facts["preference"].source_message_id == msg.pk and facts["preference"].source_agent == "extractor"
    entity_rows = OutboxMessage.objects.filter(task_name="memory.extract_entities")
    assert list(entity_rows.values_list("args", flat=True)) == [[out["created"]]]  # one message, both ids
    # Prompt carries the target message; the schema constrains the output.
    request = fake_chat.requests[0]
    assert request.schema is not None and msg.content in request.messages[-1]["content"]
    # Idempotent per message: a replay makes no model call and writes nothing.
    assert tasks.extract_facts(msg.pk) is None
    assert len(fake_chat.requests) == 1 and Fact.objects.count() == 2 and ExtractionRun.objects.count() == 1


def test_malformed_output_is_parse_error_and_writes_nothing(fake_chat, learner, make_message):
    ModelCall = apps.get_model("telemetry", "ModelCall")
    msg = make_message(learner, "I like flashcards.")
    fake_chat.push("this is not json {")
    assert tasks.extract_facts(msg.pk) == {"status": "parse_error"}
    assert not Fact.objects.exists() and not ExtractionRun.objects.exists()
    assert ModelCall.objects.filter(status="parse_error").exists()


def test_non_learner_or_missing_message_is_skipped(fake_chat, learner, make_message):
    coach = make_message(learner, "Great job!", role="coach")
    assert tasks.extract_facts(coach.pk) is None
    assert tasks.extract_facts(999_999) is None
    assert fake_chat.requests == []


def test_transient_error_retries(fake_chat, learner, make_message, monkeypatch):
    msg = make_message(learner, "I like flashcards.")
    fake_chat.push(LLMUnavailable("down"))
    calls = []
    monkeypatch.setattr(tasks.extract_facts, "retry", lambda **kw: calls.append(kw) or RuntimeError("retry"))
    with pytest.raises(RuntimeError, match="retry"):
        tasks.extract_facts(msg.pk)
    assert calls and calls[0]["countdown"] == 5 and not Fact.objects.exists()


def test_summarize_only_at_threshold(fake_chat, learner, settings):
    settings.BLOOM_SUMMARY_THRESHOLD = 2
    from memory.tests.test_services import ingest

    ingest(learner, "The learner likes podcasts.")
    assert tasks.summarize(learner.pk) is None and fake_chat.requests == []
    ingest(learner, "The learner studies on the train.")
    fake_chat.push("The learner likes podcasts and studies on the train.")
    out = tasks.summarize(learner.pk)
    assert out["facts"] == 2 and Summary.objects.get().text.startswith("The learner likes podcasts")


# --- real worker, real model ---------------------------------------------------------------------
def wait_for(predicate, timeout=240.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    return False


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_real_worker_extracts_facts_with_real_model(real_chat_model, real_celery_worker, make_learner, make_message):
    learner = make_learner()
    msg = make_message(learner, "I want to learn Spanish for my trip to Madrid in June. "
                                "I can only study in the evenings after work, about 3 hours a week.")
    with transaction.atomic():
        outbox_enqueue(task_name="memory.extract_facts", args=[msg.pk], queue="memory", dedup_key=f"t:{msg.pk}")
    assert wait_for(lambda: ExtractionRun.objects.filter(message_id=msg.pk).exists()), "extraction did not run"
    facts = list(Fact.objects.filter(learner=learner))
    assert facts, "the real model extracted no fact from a fact-rich message"
    for fact in facts:
        assert 0 < len(fact.content) <= 500 and 0 <= fact.confidence <= 1 and fact.embedding is not None
    ModelCall = apps.get_model("telemetry", "ModelCall")
    assert ModelCall.objects.filter(learner_id=learner.pk).exists()


def test_beat_tasks_run_offline(learner, settings):
    settings.BLOOM_SUMMARY_THRESHOLD = 2
    from memory.tests.test_services import ingest

    ingest(learner, "The learner likes podcasts.", "The learner studies on the train.")
    OutboxMessage.objects.all().delete()
    assert tasks.decay_tiers() == {"hot": 0, "warm": 0, "cold": 0}
    assert tasks.consolidate() == {"merged": 0, "archived": 0}
    # A learner who reached the threshold gets a summary scheduled by the offline pass.
    assert OutboxMessage.objects.filter(task_name="memory.summarize").count() == 1
