"""Control flow of specialists, tool loop, SSE framing, page and seed command. The model here is
the FAKE scripted provider (no language behaviour is asserted)."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from coaching import services
from coaching.models import ApiToken, CheckIn, Learner, Message, PlannedSession, SessionStatus, Turn
from coaching.tests.conftest import make_client, onboarded_learner
from coaching.turn import turn_run
from core.llm import LLMUnavailable
from core.llm.providers.fake import Scripted

pytestmark = pytest.mark.django_db


def _message(learner, text):
    conversation = learner.conversations.first() or services.conversation_start(learner=learner)
    msg, _ = services.message_receive(conversation=conversation, content=text)
    return msg


def test_checkin_report_logs_the_due_session_by_code(fake_model):
    client, _ = make_client()
    learner = onboarded_learner(client)
    session = services.session_schedule(learner=learner, start=timezone.now() + timedelta(minutes=1),
                                        duration_minutes=30, topic="swim")
    PlannedSession.objects.filter(pk=session.pk).update(planned_start=timezone.now() - timedelta(hours=2))
    fake_model.push("Well done, I've logged it. See you next time.")
    # No "today": the session began two hours ago, which is yesterday between 00:00 and 02:00 UTC
    # (the test failed in a CI run at 00:30), and "today" restricts the report to today's sessions.
    result = turn_run(message=_message(learner, "I did my session"))
    session.refresh_from_db()
    assert session.status == SessionStatus.COMPLETED and session.completion_source == "self_report"
    assert CheckIn.objects.get().session_id == session.id
    assert result.turn.rule == "session_report"
    assert [c["name"] for c in result.turn.tool_calls] == ["log_checkin"]
    assert "Logged: your" in result.reply.content and "session as done" in result.reply.content
    assert not any(e["kind"] == "honesty" for e in result.turn.guard_events)  # claim backed by the tool call


def test_false_schedule_claim_removed(fake_model):
    client, _ = make_client()
    learner = onboarded_learner(client)
    fake_model.push("Great idea. I've scheduled a session for tomorrow.", "Great idea. I've booked it for you.")
    result = turn_run(message=_message(learner, "what's a good warm-up?"))
    assert "scheduled" not in result.reply.content and "booked" not in result.reply.content
    assert result.reply.content.startswith("Great idea.")
    assert not PlannedSession.objects.exists()


def test_tool_loop_errors_go_back_to_model_and_final_answer_guaranteed(fake_model, settings):
    settings.BLOOM_COACH_TOOL_LOOP = True
    client, _ = make_client()
    learner = onboarded_learner(client)
    fake_model.push('{"tool_calls": [{"name": "get_progress", "arguments": {}}]}',
                    '{"tool_calls": [{"name": "search_memory", "arguments": {"query": "water"}}]}',
                    '{"tool_calls": [{"name": "get_plan", "arguments": {}}]}',
                    "You have no sessions yet; let's plan some.")
    # (A question about progress itself is answered from the database by code, without the model.)
    result = turn_run(message=_message(learner, "what should I focus on to get better?"))
    names = [c["name"] for c in result.turn.tool_calls]
    assert names == ["get_progress", "search_memory", "get_plan"]
    assert all(c["by"] == "model" for c in result.turn.tool_calls)
    assert any(e["kind"] == "tool_iterations" for e in result.turn.guard_events)  # bounded at 3
    assert result.reply.content == "You have no sessions yet; let's plan some."
    assert result.turn.model_calls == 4
    # tool results reached the model as tool messages
    assert any(m["role"] == "tool" for m in fake_model.requests[1].messages)


def test_tool_loop_invalid_output_still_answers(fake_model, settings):
    settings.BLOOM_COACH_TOOL_LOOP = True
    client, _ = make_client()
    learner = onboarded_learner(client)
    fake_model.push("not json at all", "Here's a thought: start with five minutes.")
    result = turn_run(message=_message(learner, "any advice?"))
    assert result.reply.content.startswith("Here's a thought")
    assert any(e["kind"] == "tool_output" for e in result.turn.guard_events)


@pytest.mark.django_db(transaction=True)
def test_sse_503_before_stream(fake_model):
    client, http = make_client()
    learner = onboarded_learner(client)
    conv = http.post(f"/api/v1/learners/{learner.research_id}/conversations").json()["id"]
    url = f"/api/v1/conversations/{conv}/messages"
    fake_model.push(LLMUnavailable("down", transient=True))
    r = http.post(url, {"content": "hello"}, format="json", HTTP_ACCEPT="text/event-stream")
    assert r.status_code == 503 and r.json()["error"]["code"] == "model_unavailable"
    assert Message.objects.get(content="hello").status == "unanswered"


@pytest.mark.django_db(transaction=True)
def test_sse_framing_tokens_then_final(fake_model):
    client, http = make_client()
    learner = onboarded_learner(client)
    conv = http.post(f"/api/v1/learners/{learner.research_id}/conversations").json()["id"]
    fake_model.push(Scripted(text="Keep your chin down. Breathe out slowly.", tokens=["Keep ", "your ", "chin ",
                                                                                    "down. ", "Breathe out slowly."]))
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": "tip?"}, format="json",
                  HTTP_ACCEPT="text/event-stream")
    assert r.status_code == 200 and r["Content-Type"] == "text/event-stream"
    body = b"".join(r.streaming_content).decode()
    frames = [f for f in body.split("\n\n") if f]
    # Guarded streaming: tokens are released a sentence at a time, once the sentence passed the guard.
    assert [f.split("\n")[0] for f in frames] == ["event: token"] * 2 + ["event: final"]
    tokens = [json.loads(f.split("data: ", 1)[1])["text"] for f in frames[:-1]]
    assert tokens == ["Keep your chin down.", " Breathe out slowly."]
    final = json.loads(frames[-1].split("data: ", 1)[1])
    assert final["content"] == "Keep your chin down. Breathe out slowly." and final["replaced"] is False
    reply = Message.objects.get(role="coach", reply_to__isnull=False)
    # The frame names the stored reply and its learner message by their public ids.
    assert (final["message_id"], final["reply_to"]) == (str(reply.public_id), str(reply.reply_to.public_id))


def test_chat_page_staff_only_and_csrf(fake_model):
    client, _ = make_client()
    learner = onboarded_learner(client)
    page = Client()
    assert page.get(f"/chat/{learner.research_id}/").status_code == 302  # login required
    user = get_user_model().objects.create_user("staff", password="pw-123456", is_staff=True)
    page.force_login(user)
    r = page.get(f"/chat/{learner.research_id}/")
    assert r.status_code == 200 and b"django_htmx/htmx" in r.content and b"coaching/chat.js" in r.content
    csrf_page = Client(enforce_csrf_checks=True)
    csrf_page.force_login(user)
    r = csrf_page.post(f"/chat/{learner.research_id}/send", {"content": "hi"}, content_type="application/json")
    assert r.status_code == 403  # no CSRF token
    fake_model.push("Hello! Ready for the pool?")
    r = page.post(f"/chat/{learner.research_id}/send", {"content": "hi"}, content_type="application/json")
    assert r.status_code == 201 and r.json()["reply"]["content"] == "Hello! Ready for the pool?"


def test_seed_demo_idempotent(settings, capsys):
    settings.BLOOM_DEMO_PASSWORD = "demo-pass-123"
    call_command("seed_demo")
    call_command("seed_demo")
    out = capsys.readouterr().out
    assert "demo-pass-123" in out and "Bearer" in out
    assert get_user_model().objects.filter(username="demo", is_staff=True).count() == 1
    assert Learner.objects.filter(display_name="Demo learner").count() == 1
    assert ApiToken.objects.filter(name="seed_demo", revoked_at__isnull=True).count() == 1
    raw = out.strip().split("API token")[-1].split()[0]
    http = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    learners = http.get("/api/v1/learners").json()
    assert learners["count"] == 1 and learners["results"][0]["profile"]["onboarded"] is True
    assert Turn.objects.count() == 0


@pytest.mark.embedded
def test_embedded_smoke_onboarding_gate_without_model(fake_model):
    """Smoke on the embedded stack (SQLite + filesystem broker): API, gate and persistence."""
    _, http = make_client()
    rid = http.post("/api/v1/learners", {}, format="json").json()["id"]
    conv = http.post(f"/api/v1/learners/{rid}/conversations").json()["id"]
    fake_model.default = lambda request: Scripted(text="Thanks.")
    for text in ["learn Spanish", "idk", "2.5h", "mornings", "8"]:
        assert http.post(f"/api/v1/conversations/{conv}/messages", {"content": text}, format="json").status_code == 201
    profile = http.get(f"/api/v1/learners/{rid}/profile").json()
    assert profile["onboarded"] and profile["goal_category"] == "language" and profile["weekly_hours"] == "2.50"


def test_third_person_reply_regenerated_once_then_second_person_fallback_on_the_goal(fake_model):
    client, _ = make_client()
    learner = onboarded_learner(client, goal="learn to swim")
    fake_model.push("The learner missed two sessions, so we should move them.",
                    "The learner should rest and then move the sessions.")
    result = turn_run(message=_message(learner, "what should I work on next?"))
    events = result.turn.guard_events
    assert events[0]["kind"] == "third_person" and events[0]["action"] == "regenerate"
    assert events[-1]["action"] == "fallback" and result.turn.outcome == "fallback"
    assert "the learner" not in result.reply.content.lower()
    assert "“learn to swim”" in result.reply.content and "you" in result.reply.content.lower()
    assert result.turn.model_calls == 2
    # The regeneration samples wider from another fixed seed, with the guidance in the system message.
    first, second = fake_model.requests[-2:]
    assert (first.options["temperature"], first.options["seed"]) == (0.3, 7)
    assert (second.options["temperature"], second.options["seed"]) == (0.7, 8)
    assert "never about them" in second.messages[0]["content"] and second.messages[-1]["role"] == "user"


def test_refusal_regenerated_and_the_good_second_reply_kept(fake_model):
    client, _ = make_client()
    learner = onboarded_learner(client)
    fake_model.push("I'm sorry, but I can't assist with that.", "Short swims count. What felt hardest today?")
    result = turn_run(message=_message(learner, "I only swam 10 minutes today, is that bad?"))
    assert result.reply.content.startswith("Short swims count.")
    assert [e["kind"] for e in result.turn.guard_events][:1] == ["refusal"]


def _sse(http, conv, text):
    r = http.post(f"/api/v1/conversations/{conv}/messages", {"content": text}, format="json",
                  HTTP_ACCEPT="text/event-stream")
    assert r.status_code == 200
    frames = [f for f in b"".join(r.streaming_content).decode().split("\n\n") if f]
    events = [(f.split("\n")[0].removeprefix("event: "), json.loads(f.split("data: ", 1)[1])) for f in frames]
    tokens = [data["text"] for kind, data in events if kind == "token"]
    return tokens, events[-1][1]


@pytest.mark.django_db(transaction=True)
def test_sse_scaffold_tokens_never_reach_the_client(fake_model):
    """A defect seen before: the stream showed `A` `CTIONS` ` done` ` this` ` turn`, then the final event replaced
    it with the learner's own message. Now nothing that fails the guard is released."""
    client, http = make_client()
    learner = onboarded_learner(client, goal="learn to swim")
    conv = http.post(f"/api/v1/learners/{learner.research_id}/conversations").json()["id"]
    learner_text = "I keep getting water in my nose when I turn to breathe, any idea why?"
    fake_model.push(Scripted(text="ACTIONS done this turn: none.", tokens=["A", "CTIONS", " done", " this", " turn",
                                                                          ": none."]),
                    learner_text)  # the regeneration parrots the learner: the fallback answers
    tokens, final = _sse(http, conv, learner_text)
    shown = "".join(tokens)
    assert "ACTIONS" not in shown and "CTIONS" not in shown and learner_text not in shown
    assert final["replaced"] is False and shown.strip() == final["content"]
    assert "“learn to swim”" in final["content"]


@pytest.mark.django_db(transaction=True)
def test_sse_reply_cut_at_the_first_failing_sentence_is_never_half_shown(fake_model):
    client, http = make_client()
    learner = onboarded_learner(client)
    conv = http.post(f"/api/v1/learners/{learner.research_id}/conversations").json()["id"]
    fake_model.push(Scripted(text="Nice work today. The learner should rest now.",
                             tokens=["Nice ", "work ", "today. ", "The ", "learner ", "should ", "rest ", "now."]))
    tokens, final = _sse(http, conv, "the pool felt easier this week")
    assert tokens == ["Nice work today."]
    assert final["content"] == "Nice work today." and final["replaced"] is False
    turn = Turn.objects.get()
    assert any(e["kind"] == "third_person" and e["action"].startswith("stream stopped") for e in turn.guard_events)
    assert "first_shown_ms" in turn.timings


@pytest.mark.django_db(transaction=True)
def test_sse_list_opener_is_held_back_until_what_follows_passes(fake_model):
    """The trial's stream ended "…tips to help you stay motivated:\\n1." after a later sentence failed.
    A sentence ending in ":" and a bare "1." are held back; the failing item stops the stream."""
    client, http = make_client()
    learner = onboarded_learner(client)
    conv = http.post(f"/api/v1/learners/{learner.research_id}/conversations").json()["id"]
    text = "Good question. Here are some tips to help you stay motivated:\n1. The learner should rest."
    tokens = ["Good ", "question. ", "Here ", "are ", "some ", "tips ", "to ", "help ", "you ", "stay ", "motivated:",
              "\n", "1.", " The ", "learner ", "should ", "rest."]
    fake_model.push(Scripted(text=text, tokens=tokens))
    tokens, final = _sse(http, conv, "how do I stay motivated?")
    assert "".join(tokens) == "Good question." and final["content"] == "Good question."
    assert final["replaced"] is False


@pytest.mark.django_db(transaction=True)
def test_sse_list_opener_with_a_good_list_is_shown_whole(fake_model):
    client, http = make_client()
    learner = onboarded_learner(client)
    conv = http.post(f"/api/v1/learners/{learner.research_id}/conversations").json()["id"]
    fake_model.push(Scripted(text="Try this:\n1. Swim two lengths.", tokens=["Try ", "this:", "\n", "1.", " Swim ",
                                                                           "two ", "lengths."]))
    tokens, final = _sse(http, conv, "how do I stay motivated?")
    assert "".join(tokens) == final["content"] == "Try this:\nSwim two lengths."


@pytest.mark.django_db(transaction=True)
def test_sse_reply_of_only_a_list_opener_gets_the_templated_fallback(fake_model):
    client, http = make_client()
    learner = onboarded_learner(client, goal="learn to swim")
    conv = http.post(f"/api/v1/learners/{learner.research_id}/conversations").json()["id"]
    fake_model.push(Scripted(text="Here are some tips to help you stay motivated:\n1.",
                             tokens=["Here ", "are ", "some ", "tips ", "to ", "help ", "you ", "stay ", "motivated:",
                                     "\n", "1."]),
                    "Some tips:\n-")
    tokens, final = _sse(http, conv, "how do I stay motivated?")
    assert "“learn to swim”" in final["content"] and not final["content"].rstrip().endswith((":", "1.", "-"))
    assert "".join(tokens).strip() == final["content"]
    assert [e["action"] for e in Turn.objects.get().guard_events if e["kind"] == "dangling"] == ["regenerate",
                                                                                                "fallback"]


def test_non_streamed_reply_cut_by_the_length_cap_never_ends_on_a_list_marker(fake_model):
    learner = onboarded_learner(make_client()[0])
    intro = "Staying motivated can be hard, and it is normal to have ups and downs along the way. " * 6
    # The cap's last sentence boundary before 600 characters is the inline marker "2.".
    text = intro + "Here are some tips: 1. Sleep well. 2. " + "keep a steady routine through the week " * 6
    assert len(intro) < 560 < 600 < len(text)
    fake_model.push(text)
    content = turn_run(message=_message(learner, "how do I stay motivated?")).reply.content
    assert content.startswith("Staying motivated") and content.endswith("Sleep well.")
    assert any(e["kind"] == "dangling" and e["action"] == "trimmed list opener"
               for e in Turn.objects.get().guard_events)
