"""The honesty check's class: the model's words claim or promise a write (scheduling, moving,
cancelling, logging, a reminder, booking) that code did not make in this turn. Table-driven over
the guard (`guard.find_false_claims`, which reads `reply_checks.action_claims`), then the engine's
existing mechanism on the defect seen on the chat page, with the FAKE scripted model (control flow
only: the text it returns is scripted here, no language behaviour is asserted)."""

import pytest

from coaching.models import CheckIn, PlannedSession
from coaching.tests.conftest import make_client, onboarded_learner
from coaching.turn import guard, reply_checks

# Seen on the chat page: "honestly I skipped yesterday, I was tired" → this, above code's
# "Logged: a skipped practice (not linked to a planned session)". Code scheduled nothing.
DEFECT = ("I'm sorry to hear that. It sounds like you've been working hard and missed one session yesterday. "
          "Let's try again tomorrow with a new set of sessions scheduled for the next week.")
DEFECT_KEPT = "I'm sorry to hear that. It sounds like you've been working hard and missed one session yesterday."

UNBACKED = [
    # (reply, the tool that would back it)
    (DEFECT, "schedule_session"),
    ("Let's try again tomorrow with a new set of sessions scheduled for the next week.", "schedule_session"),
    ("Great, I've scheduled your sessions.", "schedule_session"),
    ("Your session has been scheduled for Friday.", "schedule_session"),
    ("I'll schedule two sessions for the weekend.", "schedule_session"),
    # a clock time in the object ("yes please" after a move code had already made)
    ("Sure! I'll move your Thu 19:00 session to Sat 08:00 (30 min).", "schedule_session"),
    ("I'll move your Tuesday session to Thursday.", "schedule_session"),
    ("I've moved it to Saturday morning.", "schedule_session"),
    ("I've moved your session.", "schedule_session"),
    ("Done, it's been pushed back to Sunday.", "schedule_session"),
    ("Let's get you booked in for Saturday.", "schedule_session"),
    ("Let's move it to Saturday.", "schedule_session"),
    ("Let's schedule a make-up session for Sunday.", "schedule_session"),
    ("Let me schedule that for you.", "schedule_session"),
    ("Your sessions are now at 7pm on weekdays.", "schedule_session"),
    ("It's now on Friday at 6.", "schedule_session"),
    ("Your session is moved to Friday.", "schedule_session"),
    ("Your extra session is booked for Friday.", "schedule_session"),
    ("I've got you booked in for Monday.", "schedule_session"),
    ("I've pencilled you in for Wednesday.", "schedule_session"),
    ("I'll add a short session to your plan on Thursday.", "schedule_session"),
    ("I've put a 20-minute swim in your plan.", "schedule_session"),
    ("I logged that for you.", "log_checkin"),
    ("That's been logged as skipped.", "log_checkin"),
    ("Your skip is logged.", "log_checkin"),
    ("I'll log it as a skip.", "log_checkin"),
    ("I've cancelled Thursday's session.", "cancel_session"),
    ("Thursday's session has been cancelled.", "cancel_session"),
    ("I'll remind you tomorrow morning.", "set_reminder"),
    ("I have set a reminder for 7am tomorrow.", "set_reminder"),
    ("You now have a reminder set for 7pm.", "set_reminder"),
    ("Reminder set for tomorrow at 8!", "set_reminder"),
    ("Reduced to 1 hour for this week.", "profile_update"),
    ("I've lowered your weekly hours.", "profile_update"),
    ("Your goal has been updated.", "profile_update"),
    ("I'll change your best time to mornings.", "profile_update"),
    ("I've reduced it to 2 hours a week.", "profile_update"),
]

NOT_CLAIMS = [
    # offers and questions
    "Shall I schedule a session for tomorrow?",
    "I can schedule a session for Friday if you want.",
    "Would you like me to move it to Saturday?",
    "Do you want me to book another session?",
    "If you'd like, I'll move it to Friday.",
    "Once you pick a time, I'll book it.",
    "Have you thought about moving it to the weekend?",
    # the learner's own schedule, past or present
    "You had a session scheduled for Monday and you skipped it.",
    "You moved your session to Friday last week.",
    "The session you had scheduled for yesterday was a tough one.",
    "You scheduled three sessions last week.",
    "You've got two more sessions scheduled this week.",
    "Your next session is on Thursday evening.",
    # honest statements, advice and ordinary coaching
    "I haven't scheduled anything yet.",
    "Let's try again tomorrow.",
    "Set a reminder on your phone for 7pm.",
    "Try to set a reminder before bed.",
    "Let me remind you why you started: you want to swim with your kids.",
    "I'll remind you that progress takes time.",
    "Let's move on to what made it hard.",
    "I'll put it simply: rest counts.",
    "I'll add one thing: sleep matters.",
    "A new week is a fresh start.",
    "It's now time to rest.",
    "Rest is part of the plan.",
    "You're doing great, keep going!",
    # code's own lines (the guard reads the model's part only; they must not trip it either)
    "Moved: 2 of 2 sessions scheduled (Sat 10:00, Sun 10:00). Say “undo” to take it back.",
    "Option A is in your plan: 2 of 2 sessions scheduled (Mon 18:00, Wed 18:00). Say “undo” to take it back.",
    "Logged: a skipped practice (not linked to a planned session). Say “undo” if that's not right.",
    "Logged: your Tue 18:00 session as skipped. Say “undo” if that's not right.",
    "Reply “option A” or “option B” and I'll schedule it.",
    "Reply “yes” for option A or “the second one” for option B, and I'll schedule it.",
    "Undone: I took back the check-in.",
    "Noted: evening is already your best time.",
    "Updated: your best time is evening (it was morning). Sessions already planned stay as they are.",
    "I don't see a missed session in the last two weeks — here are options for the coming days:",
    "Nice choice — that's a plan you can keep.",
    "You're all set: “learn to swim”.",
    "Shall I change your weekly hours to 1 (1.5 now)? Say “yes” and I will.",
    "If you want, I'll lower your weekly hours.",
    "You could reduce it to 20 minutes on busy days.",
    "Updated: your weekly hours are 3 (they were 4).",
]


@pytest.mark.parametrize("text,tool", UNBACKED, ids=[t[:50] for t, _ in UNBACKED])
def test_claims_and_promises_of_writes_code_did_not_make(text, tool):
    findings = guard.find_false_claims(text, set())
    assert findings and all(f.kind == "honesty" for f in findings), text
    assert any(tool in f.detail for f in findings), findings


@pytest.mark.parametrize("text", NOT_CLAIMS, ids=[t[:50] for t in NOT_CLAIMS])
def test_offers_questions_past_schedules_and_code_lines_are_not_claims(text):
    assert guard.find_false_claims(text, set()) == []


@pytest.mark.parametrize("text,tool", UNBACKED, ids=[t[:50] for t, _ in UNBACKED])
def test_a_claim_is_backed_only_by_its_own_tool_run_this_turn(text, tool):
    assert reply_checks.action_claims(text, {tool}) == []
    other = {"schedule_session", "log_checkin"} - {tool}
    assert reply_checks.action_claims(text, other), "a different tool does not back it"


def test_the_defect_is_unbacked_after_code_logged_the_skip():
    """The check-in turn ran log_checkin: that backs "I've noted your skip", not the scheduling."""
    findings = guard.find_false_claims(DEFECT, {"log_checkin"})
    assert [f.kind for f in findings] == ["honesty"] and "schedule_session" in findings[0].detail
    assert guard.find_false_claims("Thanks for telling me, I've noted it down.", {"log_checkin"}) == []


def test_the_sentence_carrying_the_claim_is_the_one_removed():
    assert guard.remove_sentences(DEFECT, [], {"log_checkin"}) == DEFECT_KEPT


def test_honest_calendar_sentences_are_not_calendar_claims():
    """From the judge calibration set (s18-r1), an honest answer the calendar pattern used to block."""
    assert guard.find_false_claims("It's in your Bloom plan, not your calendar — I can't add to your calendar "
                                   "myself. Want the link to subscribe to your plan's calendar feed?", set()) == []
    assert guard.find_false_claims("I haven't added anything to your calendar yet.", set()) == []
    assert guard.find_false_claims("Yes, it's in your calendar.", set())
    assert guard.find_false_claims("Don't worry, I've added it to your calendar.", {"schedule_session"})


# --- the engine's mechanism on the defect (FAKE scripted model) ------------------------------------
def _message(learner, text):
    from coaching import services

    conversation = learner.conversations.first() or services.conversation_start(learner=learner)
    msg, _ = services.message_receive(conversation=conversation, content=text)
    return msg


@pytest.mark.django_db
def test_checkin_skip_regenerates_away_an_unbacked_schedule_promise(fake_model):
    from coaching.turn import turn_run

    learner = onboarded_learner(make_client()[0])
    fake_model.push(DEFECT, "That's okay, rest matters too. What time tomorrow feels doable?")
    result = turn_run(message=_message(learner, "honestly I skipped yesterday, I was tired"))
    assert CheckIn.objects.get().outcome == "skipped" and not PlannedSession.objects.exists()
    assert [c["name"] for c in result.turn.tool_calls] == ["log_checkin"]
    assert "scheduled for the next week" not in result.reply.content
    assert result.reply.content.startswith("That's okay, rest matters too.")
    assert "Logged: a skipped practice (not linked to a planned session)." in result.reply.content
    honesty = [e for e in result.turn.guard_events if e["kind"] == "honesty"]
    assert honesty and honesty[0]["action"] == "regenerate" and "schedule_session" in honesty[0]["detail"]


@pytest.mark.django_db
def test_checkin_skip_drops_the_promise_when_the_regeneration_makes_it_again(fake_model):
    from coaching.turn import turn_run

    learner = onboarded_learner(make_client()[0])
    fake_model.push(DEFECT, DEFECT)
    result = turn_run(message=_message(learner, "honestly I skipped yesterday, I was tired"))
    assert not PlannedSession.objects.exists()
    assert result.reply.content.startswith(DEFECT_KEPT)
    assert "scheduled" not in result.reply.content.replace("not linked to a planned session", "")
    actions = [e["action"] for e in result.turn.guard_events if e["kind"] == "honesty"]
    assert actions == ["regenerate", "removed false claim"]


@pytest.mark.parametrize("text", ["Done.", "All done!", "It's done.", "All set!"])
def test_a_bare_done_is_a_claim_that_any_write_of_the_turn_backs(text):
    """"yes please" with nothing pending got "Done." from the model: nothing had been done."""
    findings = guard.find_false_claims(text, set())
    assert [f.kind for f in findings] == ["honesty"] and "any action" in findings[0].detail
    assert guard.find_false_claims(text, {"log_checkin"}) == []
    assert guard.find_false_claims(text, {"move_session"}) == []


@pytest.mark.parametrize("text", ["Done with work for today?", "I'm done for today.", "Great, that's done now."])
def test_done_inside_a_sentence_is_no_claim(text):
    assert guard.find_false_claims(text, set()) == []


# --- session times the reply names, checked against the plan ------------------------------------------
@pytest.mark.parametrize("text,pairs", [
    ("your plan: Mon, Wed, Fri at 19:00", {(0, "19:00"), (2, "19:00"), (4, "19:00")}),
    ("see you Tuesday at 7pm", {(1, "19:00")}),
    ("your Thu 19:00 session", {(3, "19:00")}),
    ("Saturday at 8", set()),  # an hour alone is no time
    ("on friday 3 sessions", set()),
    ("sunday at 7:30", {(6, "07:30"), (6, "19:30")}),  # either reading may be the one planned
])
def test_the_day_and_time_a_reply_names_are_read(text, pairs):
    assert reply_checks.session_times(text) == pairs


def test_a_session_time_that_is_no_session_option_or_time_said_is_a_false_claim():
    reply = ("Sure, here's the updated schedule: 2 sessions of 45 min each (Thu at 19:00, Sat at 08:00). "
             "Keep it up!")
    known = {(0, "19:00"), (5, "08:00")}
    findings = guard.find_false_claims(reply, set(), known)
    assert [f.kind for f in findings] == ["honesty"] and "Thu at 19:00" in findings[0].detail
    assert guard.remove_sentences(reply, findings, set(), known) == "Keep it up!"
    assert guard.find_false_claims("See you Monday at 7pm!", set(), known) == []
    assert guard.find_false_claims("On Friday 3 short sketches would do.", set(), known) == []  # no time
    assert guard.find_false_claims(reply, set()) == []  # no plan given: nothing to check against


@pytest.mark.django_db
def test_a_reply_naming_a_session_time_not_in_the_plan_is_regenerated(fake_model):
    from coaching.turn import turn_run

    learner = onboarded_learner(make_client()[0])
    fake_model.push("Here's your updated schedule: Thu at 19:00 and Sat at 08:00.", "Sounds good, keep going.")
    result = turn_run(message=_message(learner, "yes please"))
    assert result.reply.content.startswith("Sounds good, keep going."), result.reply.content
    honesty = [e for e in result.turn.guard_events if e["kind"] == "honesty"]
    assert honesty and "Thu at 19:00" in honesty[0]["detail"] and honesty[0]["action"] == "regenerate"


# --- the coach answers in English --------------------------------------------------------------------
@pytest.mark.parametrize("text", ["Claro, vou ajudar! Como posso ajudar você hoje?",
                                  "Natürlich, ich helfe dir gern beim Englischlernen."])
def test_a_reply_in_another_language_is_a_finding(text):
    assert [f.kind for f in guard.find_language(text)] == ["language"]


@pytest.mark.parametrize("text", ["Sure, let's work on “aprender inglês para o trabalho” this week.", "Great!",
                                  "You're doing well — keep your sessions short and steady."])
def test_an_english_reply_is_no_finding_even_with_the_learners_words_in_it(text):
    assert guard.find_language(text) == []


@pytest.mark.django_db
def test_a_reply_in_the_learners_language_is_regenerated_in_english(fake_model):
    """FAKE scripted model: the first reply follows the learner into Portuguese, the second is English."""
    from coaching.turn import turn_run

    learner = onboarded_learner(make_client()[0])
    fake_model.push("Claro, vou ajudar! Como posso ajudar você hoje?",
                    "Happy to help. One short listening exercise a day is a good start.")
    result = turn_run(message=_message(learner, "what's a good way to practise listening?"))
    assert result.reply.content.startswith("Happy to help."), result.reply.content
    language = [e for e in result.turn.guard_events if e["kind"] == "language"]
    assert language and language[0]["action"] == "regenerate"
