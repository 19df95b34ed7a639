"""API behaviour: auth, isolation, bad input, idempotency, model down. Replies come from the
FAKE scripted model (these tests check control flow, not language)."""

import uuid

import pytest
from django.test import override_settings

from coaching.models import Conversation, Message, MessageStatus, PlannedSession, Turn
from coaching.tests.conftest import make_client, onboarded_learner
from core.env import ModelSpec
from core.llm import LLMUnavailable
from core.outbox.models import OutboxMessage

pytestmark = pytest.mark.django_db


def _conversation(api, learner):
    r = api.post(f"/api/v1/learners/{learner.research_id}/conversations", format="json")
    assert r.status_code == 201, r.content
    return r.json()["id"]


def test_requires_token(db):
    from rest_framework.test import APIClient

    r = APIClient().get("/api/v1/learners")
    assert r.status_code in (401, 403)
    assert set(r.json()["error"]) == {"code", "message", "field", "errors"}
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Bearer nope")
    assert bad.get("/api/v1/learners").status_code == 401


def test_token_stored_hashed(api):
    client, _ = api
    token = client.tokens.get()
    assert len(token.key_hash) == 64 and token.prefix.startswith("bloom_")


def test_create_learner_and_profile_roundtrip(api):
    _, http = api
    r = http.post("/api/v1/learners", {"display_name": "Ana", "timezone": "Europe/Lisbon"}, format="json")
    assert r.status_code == 201
    rid = r.json()["id"]
    assert r.json()["profile"]["onboarding_step"] == "goal"
    r = http.patch(f"/api/v1/learners/{rid}/profile", {"confidence": 11}, format="json")
    assert r.status_code == 400 and r.json()["error"]["field"] == "confidence"
    r = http.patch(f"/api/v1/learners/{rid}/profile", {"primary_goal": "learn to swim", "goal_category": "sport",
                                                      "weekly_hours": "2.5", "best_time": "evening",
                                                      "confidence": 7}, format="json")
    assert r.status_code == 200 and r.json()["onboarded"] is True
    bad = http.post("/api/v1/learners", {"timezone": "Mars/Olympus"}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "timezone"


def test_client_isolation(api):
    client_a, http_a = api
    _, http_b = make_client("other")
    learner = onboarded_learner(client_a)
    conv = _conversation(http_a, learner)
    assert http_b.get(f"/api/v1/learners/{learner.research_id}/profile").status_code == 404
    assert http_b.post(f"/api/v1/learners/{learner.research_id}/conversations").status_code == 404
    r = http_b.post(f"/api/v1/conversations/{conv}/messages", {"content": "hi"}, format="json")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert http_b.get(f"/api/v1/conversations/{conv}/messages").status_code == 404
    assert http_b.get("/api/v1/learners").json()["count"] == 0
    assert Message.objects.filter(content="hi").count() == 0


def test_bad_input(api, settings):
    client, http = api
    learner = onboarded_learner(client)
    conv = _conversation(http, learner)
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": "   "}, format="json")
    assert r.status_code == 400 and r.json()["error"]["field"] == "content"
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": "x" * 20_000}, format="json")
    assert r.status_code == 400
    assert str(settings.BLOOM_MAX_MESSAGE_CHARS) in r.json()["error"]["message"]
    assert r.json()["error"]["field"] == "content"
    r = http.post("/api/v1/conversations/999999/messages", {"content": "hi"}, format="json")
    assert r.status_code == 404
    # The conversation's own integer key is no route either: its id is the UUID.
    own_pk = Conversation.objects.get(public_id=conv).pk
    r = http.post(f"/api/v1/conversations/{own_pk}/messages", {"content": "hi"}, format="json")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found" and "UUID" in r.json()["error"]["message"]
    r = http.get(f"/api/v1/conversations/{uuid.uuid4()}/messages")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = http.post(f"/api/v1/conversations/{conv}/messages", "not json", content_type="application/json")
    assert r.status_code == 400 and "error" in r.json()
    assert Message.objects.filter(role="learner").count() == 0


def test_reply_persisted_once_idempotent_and_enqueues_extraction(api, fake_model):
    client, http = api
    learner = onboarded_learner(client)
    conv = _conversation(http, learner)
    fake_model.push("Nice, keep going with your swimming practice.")
    url = f"/api/v1/conversations/{conv}/messages"
    r1 = http.post(url, {"content": "what's a good warm-up?"}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert r1.status_code == 201, r1.content
    body = r1.json()
    assert body["reply"]["content"] == "Nice, keep going with your swimming practice."
    assert body["message"]["status"] == "answered"
    r2 = http.post(url, {"content": "what's a good warm-up?"}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert r2.status_code == 200 and r2.json()["replayed"] is True
    assert r2.json()["reply"]["id"] == body["reply"]["id"] and r2.json()["message"]["id"] == body["message"]["id"]
    # Messages are named by their public ids, the replay too; the integer key never leaves.
    learner_message = Message.objects.get(public_id=body["message"]["id"])
    reply = Message.objects.get(public_id=body["reply"]["id"])
    assert reply.reply_to == learner_message and body["reply"]["reply_to"] == str(learner_message.public_id)
    assert body["message"]["reply_to"] is None and r2.json()["reply"]["reply_to"] == body["reply"]["reply_to"]
    assert Turn.objects.count() == 1 and Message.objects.filter(role="coach", reply_to__isnull=False).count() == 1
    assert fake_model.pending() == 0 and len(fake_model.requests) == 1  # no second model call
    turn = Turn.objects.get()
    assert turn.rule == "default" and turn.trace_id == body["reply"]["trace_id"]
    assert set(turn.timings) >= {"routing", "context", "model", "persistence", "total"}
    # The task inside takes the integer key.
    assert OutboxMessage.objects.filter(task_name="memory.extract_facts", args=[learner_message.pk]).exists()


def test_message_list_names_messages_by_public_id_in_one_query(api, django_assert_max_num_queries):
    """The list gives each message's UUID and a reply's `reply_to` as its learner message's UUID;
    reply_to is joined, so a longer page is no more queries."""
    client, http = api
    learner = onboarded_learner(client)
    conversation = Conversation.objects.create(learner=learner)
    pairs = []
    for i in range(6):
        asked = Message.objects.create(conversation=conversation, role="learner", content=f"question {i}")
        pairs.append((asked, Message.objects.create(conversation=conversation, role="coach", content=f"answer {i}",
                                                    reply_to=asked)))
    url = f"/api/v1/conversations/{conversation.public_id}/messages"
    with django_assert_max_num_queries(6):  # a constant few: the token, the conversation, count, page
        page = http.get(url, {"limit": 12}).json()
    by_id = {m["id"]: m for m in page["results"]}
    for asked, reply in pairs:
        assert by_id[str(asked.public_id)]["reply_to"] is None
        assert by_id[str(reply.public_id)]["reply_to"] == str(asked.public_id)


def test_a_request_to_the_coach_sends_no_extraction_and_a_message_saying_more_does(api, fake_model):
    """"can we plan my week?" holds no fact about the learner: no extraction message, so no model
    call in the worker (a trial stored it as the preference "Can we plan my week?")."""
    client, http = api
    conv = _conversation(http, onboarded_learner(client))
    for text in ("can we plan my week?", "let's plan around my night shifts"):
        fake_model.push("Sounds good.")
        r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": text}, format="json")
        assert r.status_code == 201, r.content
    sent = [Message.objects.get(pk=m.args[0]).content
            for m in OutboxMessage.objects.filter(task_name="memory.extract_facts")]
    assert sent == ["let's plan around my night shifts"]


def test_extraction_switched_off_answers_without_enqueueing(api, fake_model, settings):
    settings.BLOOM_MEMORY_EXTRACTION = False
    client, http = api
    conv = _conversation(http, onboarded_learner(client))
    fake_model.push("Good question.")
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": "what next?"}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["message"]["status"] == "answered"
    assert not OutboxMessage.objects.filter(task_name="memory.extract_facts").exists()


def test_model_down_returns_503_keeps_message_then_retry_answers(api, fake_model):
    client, http = api
    learner = onboarded_learner(client)
    conv = _conversation(http, learner)
    url = f"/api/v1/conversations/{conv}/messages"
    fake_model.push(LLMUnavailable("connection refused", transient=True))
    r = http.post(url, {"content": "tell me something"}, format="json", HTTP_IDEMPOTENCY_KEY="k2")
    assert r.status_code == 503 and int(r["Retry-After"]) >= 1
    assert r.json()["error"]["code"] == "model_unavailable" and "saved" in r.json()["error"]["message"]
    kept = Message.objects.get(idempotency_key="k2")
    assert kept.status == MessageStatus.UNANSWERED and kept.content == "tell me something"
    assert r.json()["error"]["message_id"] == str(kept.public_id)
    assert Turn.objects.get(learner_message=kept).outcome == "unavailable"
    fake_model.push("Here's one idea: practise floating.")
    r = http.post(url, {"content": "tell me something"}, format="json", HTTP_IDEMPOTENCY_KEY="k2")
    assert r.status_code == 201 and r.json()["message"]["id"] == str(kept.public_id)
    kept.refresh_from_db()
    assert kept.status == MessageStatus.ANSWERED
    assert Message.objects.filter(role="learner").count() == 1


@override_settings(BLOOM_LLM=ModelSpec("ollama", "x"), OLLAMA_HOST="http://127.0.0.1:1", BLOOM_LLM_RETRIES=0)
def test_model_server_down_real_provider(api):
    from core.llm.resilience import reset_breakers

    reset_breakers()
    client, http = api
    learner = onboarded_learner(client)
    conv = _conversation(http, learner)
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": "hello coach"}, format="json")
    reset_breakers()
    assert r.status_code == 503 and r.has_header("Retry-After")
    assert Message.objects.get(content="hello coach").status == MessageStatus.UNANSWERED


def test_onboarding_works_with_model_down(api, fake_model):
    """The gate never depends on the model: with the model failing, questions are templated."""
    _, http = api
    r = http.post("/api/v1/learners", {}, format="json")
    rid = r.json()["id"]
    conv = http.post(f"/api/v1/learners/{rid}/conversations").json()
    assert "learn" in conv["messages"][0]["content"]
    url = f"/api/v1/conversations/{conv['id']}/messages"
    for _ in range(4):
        fake_model.push(LLMUnavailable("down", transient=True))
    for text in ["skip", "learn to swim", "idk", "3 hours", "evenings", "7"]:
        r = http.post(url, {"content": text}, format="json")
        assert r.status_code == 201, r.content
    profile = http.get(f"/api/v1/learners/{rid}/profile").json()
    assert profile["onboarded"] and profile["goal_category"] == "sport" and profile["weekly_hours"] == "3.00"
    assert not OutboxMessage.objects.filter(task_name="memory.extract_facts").exists()  # onboarding: no extraction


def test_guard_regenerates_then_falls_back(api, fake_model):
    client, http = api
    learner = onboarded_learner(client)
    conv = _conversation(http, learner)
    fake_model.push("assistant: ### Here is my plan for you", "I've scheduled three sessions in your calendar.")
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": "any tips?"}, format="json")
    assert r.status_code == 201
    content = r.json()["reply"]["content"]
    assert "assistant:" not in content and "scheduled" not in content
    events = Turn.objects.get().guard_events
    assert events[0]["action"] == "regenerate" and events[0]["kind"] == "leak"
    assert any(e["kind"] == "honesty" for e in events)


def test_tracker_arm_gets_no_model_reply(api, fake_model):
    client, http = api
    learner = onboarded_learner(client, arm="tracker")
    conv = _conversation(http, learner)
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": "I feel stuck"}, format="json")
    assert r.status_code == 201 and "tracker" in r.json()["reply"]["content"]
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": "let's plan"}, format="json")
    assert "Option A" in r.json()["reply"]["content"]
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": "option B"}, format="json")
    assert "scheduled" in r.json()["reply"]["content"]
    # Sessions go to the plan of their own week: from a Thursday, "Fri, Mon" spans two plans.
    assert PlannedSession.objects.filter(plan__learner=learner).count() == 2
    assert [r for r in fake_model.requests if r.model != "reader"] == []  # reading is no coaching
