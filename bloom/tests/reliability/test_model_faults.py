"""The model provider down, slow and back, through the real API (in-process) against the fake
Ollama server (real HTTP on 127.0.0.1, real llama.cpp behind it):

- down (connection refused) → 503 + Retry-After in the error shape, the learner's message kept
  and marked unanswered, one telemetry row per failed call;
- the circuit breaker opens after the threshold: the next call fails at once without reaching
  the backend (recorded as `circuit_open`), Retry-After ≈ the remaining cool-down;
- slow (the server sleeps before answering) → the client timeout fires → 503, a `timeout` row;
- back → after the cool-down the half-open trial succeeds and retrying a kept message with its
  idempotency key answers that same message.
Ends with the conversation's reconciliation: messages in = replies + messages marked unanswered."""

from __future__ import annotations

import time

import pytest

from bloom.tests.reliability.conftest import error_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def ollama_settings(settings):
    from bloom.tests.llm.fake_ollama_server import FAKE_OLLAMA_MODEL
    from core.env import ModelSpec
    from core.llm import assets
    from core.llm.resilience import reset_breakers

    if not assets.chat_model_path("qwen2.5-coder-0.5b-instruct-q4").is_file():
        pytest.skip("chat model not assembled: run `python manage.py bloom_models`")
    settings.BLOOM_LLM = ModelSpec("ollama", FAKE_OLLAMA_MODEL)
    settings.BLOOM_LLM_RETRIES = 0
    settings.BLOOM_LLM_BREAKER_THRESHOLD = 2
    settings.BLOOM_LLM_BREAKER_COOLDOWN = 60
    settings.BLOOM_LLM_BACKOFF = 0.01
    reset_breakers()
    yield settings
    reset_breakers()


def test_model_down_slow_and_back(tenants, ollama_settings):
    from bloom.tests.llm.fake_ollama_server import refused_url, running_fake_ollama
    from coaching.models import Message, MessageStatus, Role
    from core.llm.resilience import reset_breakers
    from telemetry.models import ModelCall

    a, _ = tenants
    url = f"/api/v1/conversations/{a.conversation.public_id}/messages"

    def say(text, key):
        return a.api.post(url, {"content": text}, format="json", HTTP_IDEMPOTENCY_KEY=key)

    # down -----------------------------------------------------------------------------------------
    ollama_settings.OLLAMA_HOST = refused_url()
    first = say("Tell me something encouraging about learning.", "down-1")
    assert first.status_code == 503
    assert error_of(first)["code"] == "model_unavailable"
    assert int(first["Retry-After"]) >= 1
    kept = Message.objects.get(public_id=first.json()["error"]["message_id"])  # the public id, never the key
    assert kept.status == MessageStatus.UNANSWERED and kept.content == "Tell me something encouraging about learning."
    assert say("Any tips for new words?", "down-2").status_code == 503  # 2nd failure: the breaker opens
    calls_before = ModelCall.objects.count()
    fast = say("Still there?", "down-3")
    assert fast.status_code == 503
    assert int(fast["Retry-After"]) > 30, "Retry-After tells the client about the breaker's cool-down"
    new_calls = list(ModelCall.objects.order_by("-id")[: ModelCall.objects.count() - calls_before])
    assert new_calls and all(c.extra.get("circuit_open") for c in new_calls), "the open breaker spared the backend"

    # slow -----------------------------------------------------------------------------------------
    reset_breakers()
    ollama_settings.BLOOM_LLM_TIMEOUT = 1.0
    with running_fake_ollama(mode="slow", delay=4.0) as base_url:
        ollama_settings.OLLAMA_HOST = str(base_url)
        slow = say("How do I stay motivated?", "slow-1")
        assert slow.status_code == 503
        assert error_of(slow)["code"] == "model_unavailable"
        assert ModelCall.objects.filter(status="timeout", learner_id=a.learner.pk).exists()

        # back (same server, answering normally; the breaker recovers through its half-open trial) ----
        base_url.server.mode = "ok"
        ollama_settings.BLOOM_LLM_TIMEOUT = 600
        ollama_settings.BLOOM_LLM_BREAKER_COOLDOWN = 0.5
        time.sleep(0.6)
        retried = say("Tell me something encouraging about learning.", "down-1")
        assert retried.status_code == 201, retried.content
        assert retried.json()["message"]["id"] == str(kept.public_id), "the kept message itself is answered"
        assert retried.json()["reply"]["content"]

    learner_msgs = Message.objects.filter(conversation=a.conversation, role=Role.LEARNER)
    replies = Message.objects.filter(conversation=a.conversation, role=Role.COACH, reply_to__isnull=False)
    unanswered = learner_msgs.filter(status=MessageStatus.UNANSWERED).count()
    assert not learner_msgs.filter(status=MessageStatus.PENDING).exists()
    assert learner_msgs.count() == replies.count() + unanswered
    assert unanswered == 3  # down-2, down-3, slow-1; down-1 was answered on retry, none lost
