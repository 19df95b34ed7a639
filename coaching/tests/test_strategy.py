"""A reply strategy per act, chosen by code, and no reply that dodges a question: a generic line or
words that do not touch the question are regenerated, then answered by the act's own fallback."""

import pytest

from coaching.turn import reply_checks
from coaching.turn.reading.types import Reading, Value
from coaching.turn.strategy import fallback_reply, strategy_for
from evaluation.checks import CheckContext, run_checks


def _reading(act, **values):
    return Reading(act, {k: Value(v, str(v), "rules") for k, v in values.items()})


@pytest.mark.parametrize("reading,name", [
    (_reading("other", concern=True), "barrier"), (_reading("report", outcome="completed"), "report"),
    (_reading("question", about="other"), "question"), (_reading("small_talk"), "small_talk"),
    (_reading("other"), "other"), (None, "other"),
])
def test_code_chooses_the_strategy_from_the_reading(reading, name):
    assert strategy_for(reading).name == name


def test_a_question_fallback_answers_the_question_asked_and_is_no_dodge():
    asked = "do you think I should practise today or rest?"
    fallback = fallback_reply(strategy_for(_reading("question")), learner_text=asked, goal="learn piano")
    assert "practise today" in fallback
    assert reply_checks.dodge(fallback, asked) is None
    generic = "Let's keep your focus on “learn piano”. What would help you most with it this week?"
    assert reply_checks.dodge(generic, asked, [generic]) is not None
    assert reply_checks.dodge("Good luck with your scales.", "I did my scales today") is None  # not a question


def test_the_evaluation_check_flags_a_dodge_and_passes_an_answer():
    ctx = CheckContext(primary_goal="learn piano", learner_text="did you put my sessions in my google calendar?")
    dodged = run_checks("Let's keep your focus on “learn piano”. What would help you most with it this week?", ctx)
    answered = run_checks("No — your sessions are in Bloom's calendar feed; subscribe to it in Google Calendar.", ctx)
    assert dodged["dodge"]["flag"] and not answered["dodge"]["flag"]


@pytest.mark.django_db
def test_a_dodging_reply_is_regenerated_then_the_questions_own_fallback_answers(api, fake_model):
    from coaching.models import Turn
    from coaching.tests.conftest import onboarded_learner

    client, http = api
    learner = onboarded_learner(client, goal="learn piano", category="music")
    generic = "Let's keep your focus on “learn piano”. What would help you most with it this week?"
    fake_model.push(generic, generic)
    conv = http.post(f"/api/v1/learners/{learner.research_id}/conversations").json()["id"]
    r = http.post(f"/api/v1/conversations/{conv}/messages",
                  {"content": "is it better to practise scales before or after pieces?"}, format="json")
    reply = r.json()["reply"]["content"]
    assert generic not in reply and "practise scales" in reply, reply
    turn = Turn.objects.order_by("-id").first()
    assert [e["action"] for e in turn.guard_events if e["kind"] == "dodge"] == ["regenerate", "fallback"]
