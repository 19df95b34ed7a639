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
    (_reading("other"), "other"), (None, "other"), (_reading("undo"), "undo"),
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


def test_a_reply_that_answers_from_what_is_known_of_the_learner_is_no_dodge():
    """"am I getting anywhere?" answered with the remembered numbers shares no word with the question,
    but it answers it; a reply that touches neither the question nor the learner does not."""
    asked = "be honest, is any of this paying off?"
    known = "learn to touch type · typing speed went from 25 to 38 words per minute in three weeks"
    answer = "Yes: your typing speed went from 25 to 38 words a minute in three weeks."
    assert reply_checks.dodge(answer, asked, known=known) is None
    assert reply_checks.dodge("I'm glad you found the information helpful!", asked, known=known) is not None
    assert reply_checks.dodge("You could draw a portrait on Tuesday.", "what should I be drawing tomorrow?") is None


def test_code_s_own_answer_is_judged_by_its_generic_lines_only():
    """What Bloom is, the plan, the calendar: code's text is written to answer the act, so only a
    generic line in it is a dodge — the onboarding's "Happy to get to that in a moment" is one."""
    about = "I'm Bloom: I help you pick a learning goal, plan sessions that fit your week and check in on them."
    ctx = CheckContext(learner_text="so what is this app exactly?", template_texts=(about,))
    assert not run_checks(about, ctx)["dodge"]["flag"]
    deferred = "Happy to get to that in a moment — a few quick questions first so the plan fits you. What's your goal?"
    ctx = CheckContext(learner_text="is an hour a day too much?", template_texts=(deferred,))
    assert run_checks(deferred, ctx)["dodge"]["flag"]


@pytest.mark.parametrize("text,asking", [
    ("did 20 minutes of scales", False), ("had my first lesson today!", False), ("was rough, skipped it", False),
    ("did you add it to my calendar", True), ("is an hour enough", True), ("pottery maybe?", False),
    ("uh, 4 hours?", False), ("so what now?", True), ("hello?", False),
])
def test_what_asks_and_what_reports_or_offers_an_answer(text, asking):
    from coaching.turn.reading.rules import asks

    assert asks(text) is asking


def test_undo_with_nothing_to_undo_is_said_plainly():
    reply = fallback_reply(strategy_for(_reading("undo")), learner_text="undo", goal="learn to swim")
    assert reply.startswith("There's nothing for me to undo") and "learn to swim" not in reply
