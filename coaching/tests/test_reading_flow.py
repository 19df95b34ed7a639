"""Through the REST API: acts that match the request. A move moves the named session (one write,
stated, undoable); a question about the plan or the calendar is answered from the database; a
length and a day the learner names are kept; a greeting or a request is never stored as a goal.
The chat model is the FAKE scripted one (code decisions only); the reader's proposals, where a test
needs one, are scripted on the fake's separate "reader" queue and settled by the real code."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from coaching import services
from coaching.models import LearnerProfile, PlannedSession, Turn
from coaching.tests.conftest import onboarded_learner
from coaching.tests.test_gate_and_intent_flow import _sayer
from core.llm.providers.fake import Scripted
from core.outbox.models import OutboxMessage

pytestmark = pytest.mark.django_db


@pytest.fixture
def say_for(api, fake_model):
    fake_model.default = lambda request: Scripted(text="Sounds good.")
    _, http = api
    return lambda learner_id: _sayer(http, learner_id)


def _next_weekday(weekday: int, hour: int, learner):
    tz = services.learner_tz(learner)
    now = timezone.now().astimezone(tz)
    day = now + timedelta(days=(weekday - now.weekday()) % 7 or 7)
    return day.replace(hour=hour, minute=0, second=0, microsecond=0)


def test_a_move_moves_the_named_session_once_and_undo_puts_it_back(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    thursday = services.session_schedule(learner=learner, start=_next_weekday(3, 19, learner), duration_minutes=45)
    say = say_for(learner.research_id)
    reply = say("can you move my thursday session to saturday morning?")
    assert reply.startswith("Moved: your Thu 19:00 session is now Sat 08:00 (45 min)."), reply
    assert PlannedSession.objects.filter(plan__learner=learner).count() == 1  # moved, not added
    moved = PlannedSession.objects.get(pk=thursday.pk)
    assert moved.planned_start.astimezone(services.learner_tz(learner)).strftime("%a %H:%M") == "Sat 08:00"
    turn = Turn.objects.order_by("-id").first()
    assert [c["name"] for c in turn.tool_calls] == ["move_session"] and turn.model_calls == 0
    assert turn.reading["act"] == "move" and turn.reading["values"]["days"]["span"] == "saturday morning"
    reply = say("undo")
    assert reply.startswith("Undone: I took back the move"), reply
    back = PlannedSession.objects.get(pk=thursday.pk)
    assert back.planned_start == thursday.planned_start


def test_a_move_of_a_day_with_no_session_says_so_and_asks_which_keeping_where_to(api, say_for, fake_model):
    """The only planned session is Thursday's: "the saturday one" is not it, so nothing moves until
    the learner says which; where to (Sunday) is kept for the answer."""
    client, _ = api
    learner = onboarded_learner(client)
    thursday = services.session_schedule(learner=learner, start=_next_weekday(3, 19, learner), duration_minutes=45)
    say = say_for(learner.research_id)
    fake_model.push_to("reader", json.dumps({"act": "move", "session": "the saturday one", "target": "sunday evening"}))
    reply = say("can i do the saturday one on sunday instead")
    assert reply.startswith("There's no Saturday session in your plan. Which session should I move — A: Thu 19:00"), \
        reply
    assert PlannedSession.objects.get(pk=thursday.pk).planned_start == thursday.planned_start
    reply = say("A")
    moved = PlannedSession.objects.get(pk=thursday.pk)
    assert moved.planned_start.astimezone(services.learner_tz(learner)).strftime("%a %H:%M") == "Sun 19:00", reply


def test_a_move_without_a_time_asks_to_when_and_the_answer_moves_it(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    session = services.session_schedule(learner=learner, start=_next_weekday(3, 19, learner), duration_minutes=30)
    say = say_for(learner.research_id)
    assert say("can you move my thursday session?").startswith("To when should I move your Thu 19:00 session?")
    assert PlannedSession.objects.get(pk=session.pk).planned_start == session.planned_start  # nothing written yet
    assert say("friday at 18:00").startswith("Moved: your Thu 19:00 session is now Fri 18:00")


def test_a_move_onto_another_session_is_not_made_and_asks_to_when_else(api, say_for):
    """Friday 19:00 is taken: the move is refused before it is tried (one session at a time), the
    coach says which session is there and asks to when else; the answer moves it."""
    client, _ = api
    learner = onboarded_learner(client)
    thursday = services.session_schedule(learner=learner, start=_next_weekday(3, 19, learner), duration_minutes=30)
    services.session_schedule(learner=learner, start=_next_weekday(4, 19, learner), duration_minutes=30)
    say = say_for(learner.research_id)
    reply = say("can you move my thursday session to friday at 19:00?")
    assert reply.startswith("Your Fri 19:00 session is already then, so I can't move your Thu 19:00 session"), reply
    assert PlannedSession.objects.get(pk=thursday.pk).planned_start == thursday.planned_start
    assert say("saturday at 10:00").startswith("Moved: your Thu 19:00 session is now Sat 10:00")


def test_a_bare_yes_to_several_sessions_a_move_could_mean_moves_none_and_asks_which(api, say_for):
    """The learner named a day with no session on it; the coach lists the sessions. "yes please"
    names none of them: nothing moves, and the coach asks which one."""
    client, _ = api
    learner = onboarded_learner(client)
    monday = services.session_schedule(learner=learner, start=_next_weekday(0, 19, learner), duration_minutes=60)
    wednesday = services.session_schedule(learner=learner, start=_next_weekday(2, 19, learner), duration_minutes=60)
    say = say_for(learner.research_id)
    assert say("could you shift my friday practice to sunday afternoon?").startswith("Which session should I move")
    reply = say("yes please")
    assert reply.startswith("Which one shall I move — A ("), reply
    for session in (monday, wednesday):
        assert PlannedSession.objects.get(pk=session.pk).planned_start == session.planned_start
    assert say("the wednesday one").startswith("Moved: your Wed 19:00 session is now Sun")


def test_calendar_and_plan_questions_are_answered_from_the_database_not_with_options(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    reply = say("what's on my plan for this week?")
    assert reply.startswith("Nothing is planned right now.") and "Option" not in reply
    reply = say("did you put my sessions in my google calendar?")
    assert "can't put sessions into Google Calendar myself" in reply and "haven't confirmed" in reply
    assert "Option" not in reply and not PlannedSession.objects.exists()
    services.session_schedule(learner=learner, start=_next_weekday(1, 18, learner), duration_minutes=40)
    assert say("when is my next session?").startswith("Your plan: Tue 18:00 (40 min).")


def test_a_named_length_and_day_make_the_one_option_offered(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    reply = say("Schedule a 30 minute practice on Thursday")
    assert "Option A: 1 session of 30 min (Thu at 19:00)" in reply and "Option B" not in reply, reply
    assert not PlannedSession.objects.exists()  # offered, not scheduled: the learner has not accepted
    assert "1 of 1 sessions scheduled" in say("yes please")
    assert PlannedSession.objects.get().duration_minutes == 30


def test_a_clock_time_with_minutes_is_kept_in_the_offer_and_the_session(api, say_for):
    """"at 5:45am" is 05:45, not 05:00: the minutes the learner named are where the session starts."""
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    reply = say("Schedule a 30 minute practice on Thursday at 5:45am")
    assert "Option A: 1 session of 30 min (Thu at 05:45)" in reply, reply
    say("yes")
    start = PlannedSession.objects.get().planned_start.astimezone(services.learner_tz(learner))
    assert start.strftime("%a %H:%M") == "Thu 05:45"


def test_an_option_picked_with_another_hour_is_scheduled_at_that_hour(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    reply = say("Schedule a 30 minute practice on Thursday")
    assert "Option A: 1 session of 30 min (Thu at 19:00)" in reply, reply
    reply = say("A but at 8pm instead")
    session = PlannedSession.objects.get()
    assert session.planned_start.astimezone(services.learner_tz(learner)).hour == 20, reply
    assert "(Thu at 20:00)" in reply and "19:00" not in reply, reply  # said as it was scheduled


@pytest.mark.parametrize("pick", ["make the first one 40 min instead", "A, but 40 minutes each",
                                  "A but at 8pm, 40 min each"])
def test_an_option_picked_with_another_length_is_offered_at_that_length_and_scheduled_on_yes(api, say_for, pick):
    """The length named with the pick is kept: nothing is scheduled at the option's own length, the
    option comes back at the length named, and a yes schedules it so."""
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    reply = say("Schedule a 60 minute practice on Thursday and one on Saturday")
    assert "of 60 min" in reply and "Option A" in reply, reply
    reply = say(pick)
    assert not PlannedSession.objects.filter(plan__learner=learner).exists(), reply
    assert "of 40 min" in reply and "60 min" not in reply and "Shall I schedule" in reply, reply
    assert ("at 20:00" in reply) == ("8pm" in pick), reply  # an hour said with them is kept too
    reply = say("yes")
    sessions = PlannedSession.objects.filter(plan__learner=learner)
    assert sessions.exists() and {s.duration_minutes for s in sessions} == {40}, reply


@pytest.mark.parametrize("text", ["hii", "skip the questions, just give me a study plan right now",
                                  "I keep failing at Japanese, what should I do"])
def test_a_greeting_a_request_or_a_question_is_never_stored_as_the_goal(api, say_for, text):
    _, http = api
    rid = http.post("/api/v1/learners", {}, format="json").json()["id"]
    reply = say_for(rid)(text)
    profile = LearnerProfile.objects.get(learner__research_id=rid)
    assert profile.primary_goal == "" and profile.onboarding_step == "goal"
    assert "What would you like to learn" in reply or "one thing you'd like to learn" in reply or \
        "one skill" in reply, reply


@pytest.mark.parametrize("yes", ["yes", "sim", "👍"])
def test_a_goal_in_another_language_is_the_learners_words_said_back_and_stored_on_yes(api, say_for, fake_model, yes):
    _, http = api
    rid = http.post("/api/v1/learners", {}, format="json").json()["id"]
    say = say_for(rid)
    fake_model.push_to("reader", json.dumps({"act": "answer", "goal": "aprender inglês para o trabalho",
                                             "lang": "pt"}))
    reply = say("Olá! Quero aprender inglês para o trabalho")
    assert LearnerProfile.objects.get(learner__research_id=rid).primary_goal == "", reply
    assert "I understood your goal as “aprender inglês para o trabalho”. Is that right?" in reply
    assert "answer in English" in reply
    turn = Turn.objects.order_by("-id").first()
    assert turn.reading["values"]["gloss"]["source"] == "model" and "goal" not in turn.reading["values"]
    reply = say(yes)
    assert LearnerProfile.objects.get(learner__research_id=rid).primary_goal == "aprender inglês para o trabalho"


@pytest.mark.parametrize("lang", [{}, {"lang": "en"}])
def test_a_goal_said_back_because_its_words_are_not_english_says_so_whatever_language_the_model_named(
        api, say_for, fake_model, lang):
    _, http = api
    rid = http.post("/api/v1/learners", {}, format="json").json()["id"]
    fake_model.push_to("reader", json.dumps({"act": "answer", "goal": "aprender inglês para o trabalho", **lang}))
    reply = say_for(rid)("Olá! Quero aprender inglês para o trabalho")
    assert "I understood your goal as “aprender inglês para o trabalho”. Is that right?" in reply, reply
    assert "I read your message in another language and answer in English." in reply, reply
    assert Turn.objects.order_by("-id").first().reading["values"]["lang"]["value"] == "pt"  # told by code


def test_a_goal_in_english_the_rules_doubt_is_said_back_without_a_word_on_language(api, say_for, fake_model):
    _, http = api
    rid = http.post("/api/v1/learners", {}, format="json").json()["id"]
    fake_model.push_to("reader", json.dumps({"act": "answer", "lang": "en",
                                             "goal": "touch typing lmao my 2 finger method is embarassing"}))
    reply = say_for(rid)("touch typing lmao my 2 finger method is embarassing")
    assert LearnerProfile.objects.get(learner__research_id=rid).primary_goal == "", reply
    assert reply.startswith("I understood your goal as “touch typing lmao"), reply


@pytest.mark.parametrize("proposal", [{"act": "question", "lang": "en"}, {"act": "other"}, {"act": "small_talk"}])
def test_a_goal_the_rules_doubt_and_no_proposal_backs_is_said_back_not_asked_for_again(api, say_for, fake_model,
                                                                                      proposal):
    """The learner named a goal; the coach says what it read (from its verb on) and asks, rather
    than asking for a goal again as if nothing had been said."""
    _, http = api
    rid = http.post("/api/v1/learners", {}, format="json").json()["id"]
    say = say_for(rid)
    fake_model.push_to("reader", json.dumps(proposal))
    reply = say("so i've been wanting to get better at chess, i'm like 900 elo")
    assert reply.startswith("I understood your goal as “get better at chess”. Is that right?"), reply
    assert LearnerProfile.objects.get(learner__research_id=rid).primary_goal == ""
    say("yep")
    profile = LearnerProfile.objects.get(learner__research_id=rid)
    assert profile.primary_goal == "get better at chess" and profile.onboarding_step != "goal"


def test_a_proposal_that_invents_words_stores_nothing(api, say_for, fake_model):
    _, http = api
    rid = http.post("/api/v1/learners", {}, format="json").json()["id"]
    fake_model.push_to("reader", json.dumps({"act": "answer", "goal": "learn English for work", "lang": "pt"}))
    say_for(rid)("Olá! Quero aprender inglês para o trabalho")
    assert LearnerProfile.objects.get(learner__research_id=rid).primary_goal == ""
    turn = Turn.objects.order_by("-id").first()
    assert any("not the learner's words" in r for r in turn.reading["rejected"])


def test_a_goal_the_model_translated_is_said_back_and_stored_only_on_yes(api, say_for, fake_model):
    _, http = api
    rid = http.post("/api/v1/learners", {}, format="json").json()["id"]
    say = say_for(rid)
    fake_model.push_to("reader", json.dumps({"act": "answer", "goal": "learn English for work", "lang": "pt"}))
    reply = say("Olá! Quero aprender inglês para o trabalho")
    assert "I understood your goal as “learn English for work”. Is that right?" in reply, reply
    assert LearnerProfile.objects.get(learner__research_id=rid).primary_goal == ""  # nothing stored yet
    reply = say("yes")
    profile = LearnerProfile.objects.get(learner__research_id=rid)
    assert profile.primary_goal == "learn English for work" and profile.onboarding_step != "goal", reply


def test_a_translated_goal_declined_stores_nothing_and_a_goal_in_words_is_taken(api, say_for, fake_model):
    _, http = api
    rid = http.post("/api/v1/learners", {}, format="json").json()["id"]
    say = say_for(rid)
    fake_model.push_to("reader", json.dumps({"act": "answer", "goal": "learn English for work", "lang": "pt"}))
    say("Olá! Quero aprender inglês para o trabalho")
    say("no")
    assert LearnerProfile.objects.get(learner__research_id=rid).primary_goal == ""
    say("learn English for my job")
    assert LearnerProfile.objects.get(learner__research_id=rid).primary_goal == "learn English for my job"


def test_undo_when_nothing_was_written_is_said_by_code_not_the_model(api, say_for, fake_model):
    """The FAKE model is scripted to claim an undo: the reply must not be its words."""
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    say("hello there")
    fake_model.default = lambda request: Scripted(text="I've taken the session back. Let's continue!")
    reply = say("undo")
    assert reply.startswith("There's nothing for me to undo"), reply
    turn = Turn.objects.order_by("-id").first()
    assert turn.model_calls == 0 and turn.tool_calls == []


def test_a_day_named_in_a_move_request_is_not_taken_as_a_day_the_learner_is_free(api, say_for, fake_model):
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    fake_model.push_to("reader", json.dumps({"act": "move", "session": "wednesday's session", "target": "7:30"}))
    say("bump wednesday's session to 7:30")
    assert Turn.objects.order_by("-id").first().reading["act"] == "move"
    reply = say("let's plan my week")
    assert "Wednesdays" not in reply and "Option A" in reply, reply


def test_a_report_the_model_proposes_takes_its_outcome_from_the_words_and_its_day_and_is_asked_about(
        api, say_for, fake_model):
    """The reader's proposal is SCRIPTED (the fake model): it says only that the message is a
    report. Code reads the outcome from the words (they say no: skipped), finds the session by the
    day they name (yesterday's, not the older one), and asks before it logs."""
    from coaching.models import CheckIn
    from coaching.tests.test_gate_and_intent_flow import _past_session

    client, _ = api
    learner = onboarded_learner(client)
    _past_session(learner, hours_ago=50)
    yesterday = _past_session(learner, hours_ago=24)
    shown = yesterday.planned_start.astimezone(services.learner_tz(learner)).strftime("%a %H:%M")
    say = say_for(learner.research_id)
    fake_model.push_to("reader", json.dumps({"act": "report"}))
    reply = say("yesterday was a no")
    assert reply == f"Shall I log your {shown} session as skipped? Say “yes” and I will.", reply
    assert not CheckIn.objects.exists()
    say("yes")
    checkin = CheckIn.objects.get()
    assert (checkin.session_id, checkin.outcome) == (yesterday.pk, "skipped")


def test_a_change_weighed_in_a_question_is_offered_not_written_and_a_yes_writes_it(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    services.profile_update(learner=learner, weekly_hours=6)
    say = say_for(learner.research_id)
    reply = say("ugh this week was a mess, work ate every evening and i got one session in. "
                "maybe i should lower it to 4 hours... what do you think?")
    assert reply == ("Sounds good.\n\nShall I change your weekly hours to 4 (6 now)? Say “yes” and I will; "
                     "sessions already planned stay as they are."), reply
    assert LearnerProfile.objects.get(learner=learner).weekly_hours == 6  # weighed, not written
    turn = Turn.objects.order_by("-id").first()
    assert turn.reading["act"] == "question" and turn.reading["values"]["weekly_hours"]["value"] == 4.0
    assert turn.reading["settled"] and turn.reading["rejected"] == []  # settled by the rules: no reader call
    reply = say("yes")
    assert reply.startswith("Updated: 4 hours a week (it was 6)."), reply
    assert LearnerProfile.objects.get(learner=learner).weekly_hours == 4
    assert say("undo") == "Undone: I took back the change (weekly hours back to 6)."
    assert LearnerProfile.objects.get(learner=learner).weekly_hours == 6


def test_the_amount_weighed_is_not_the_one_held_when_the_question_names_both(api, say_for):
    """"6 hours feels like a lot, maybe i should drop it to 4?": 6 is what the learner has, 4 is what
    they weigh; the coach offers 4 and writes nothing yet."""
    client, _ = api
    learner = onboarded_learner(client)
    services.profile_update(learner=learner, weekly_hours=6)
    reply = say_for(learner.research_id)("rough couple of weeks. 6 hours feels like a lot right now, "
                                         "maybe i should drop it to 4? what do you think?")
    assert "Shall I change your weekly hours to 4 (6 now)?" in reply, reply
    assert LearnerProfile.objects.get(learner=learner).weekly_hours == 6


def test_an_offer_stands_alone_when_the_models_words_fail_the_guard(api, say_for, fake_model):
    """The model claims the change was made (it was not): its words are refused, and the reply is the
    offer in code's words, with no stock line in front of it."""
    client, _ = api
    learner = onboarded_learner(client)
    services.profile_update(learner=learner, weekly_hours=6)
    say = say_for(learner.research_id)
    fake_model.default = lambda request: Scripted(text="Done! I've updated your weekly hours to 4 hours.")
    reply = say("rough couple of weeks. maybe i should drop it to 4 hours? what do you think?")
    assert reply.startswith("Shall I change your weekly hours to 4 (6 now)?"), reply
    assert LearnerProfile.objects.get(learner=learner).weekly_hours == 6
    assert Turn.objects.order_by("-id").first().outcome == "fallback"


def test_a_no_to_an_offered_change_keeps_the_profile(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    reply = say("would mornings work better for me, do you think?")
    assert reply.endswith("Shall I change your best time to morning (evening now)? Say “yes” and I will; "
                          "sessions already planned stay as they are."), reply
    assert say("no thanks") == "OK, I'll leave it as it is."
    assert LearnerProfile.objects.get(learner=learner).best_time == "evening"
    # Nothing is pending any more: a later "yes" writes nothing.
    say("yes")
    assert LearnerProfile.objects.get(learner=learner).best_time == "evening"


def test_a_day_named_for_a_new_session_rules_no_other_day_out(api, say_for):
    """"a 30 minute practice on Friday" says where the new session goes, not that the days of the
    sessions already planned do not work; "just weekends" does."""
    client, _ = api
    learner = onboarded_learner(client)
    services.session_schedule(learner=learner, start=_next_weekday(0, 19, learner), duration_minutes=30)
    say = say_for(learner.research_id)
    reply = say("Schedule a 30 minute practice on Friday evening")
    assert "Option A: 1 session of 30 min (Fri at 19:00)" in reply, reply
    assert "doesn't work" not in reply, reply
    reply = say("plan my week, just weekends")
    assert "Mon 19:00 is on a day you said doesn't work; it is still in your plan." in reply, reply


def test_one_hour_is_said_in_the_singular(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    assert say_for(learner.research_id)("I can only do 1 hour a week now").startswith(
        "Updated: 1 hour a week (it was 3)."), "singular"


def test_a_request_to_plan_at_the_best_time_question_answers_it_and_keeps_the_day(api, say_for):
    client, _ = api
    learner = services.learner_create(client=client, study_arm="coach")
    services.profile_update(learner=learner, primary_goal="learn English for work", goal_category="language",
                            weekly_hours=2)
    say = say_for(learner.research_id)
    reply = say("Schedule a 30 minute practice on Thursday evening")
    assert reply.startswith("I'll keep “on Thursdays” for your plan. Best time: evening."), reply
    assert LearnerProfile.objects.get(learner=learner).best_time == "evening"
    # A request that says no time of day is still asked the question, and nothing is stored.
    services.profile_update(learner=learner, best_time="")
    reply = say("skip the questions, just give me a study plan right now")
    assert reply.startswith("Your plan comes right after a few quick answers"), reply
    assert LearnerProfile.objects.get(learner=learner).best_time == ""


def test_a_reply_to_plan_options_nothing_can_place_asks_which_and_schedules_nothing(api, say_for, fake_model):
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    assert "Option A" in say("plan my week")
    # The reader proposes a plan request whose quotes are not the learner's words: nothing settles.
    fake_model.push_to("reader", json.dumps({"act": "plan", "session": "first session", "target": "08:00"}))
    reply = say("die kürzere")
    assert reply.startswith("Which one shall I schedule — A (") and not PlannedSession.objects.exists(), reply
    assert "sessions scheduled" in say("A")


def test_a_weekly_amount_weighed_in_a_yes_or_no_question_is_offered_whatever_its_verb(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    services.profile_update(learner=learner, weekly_hours=3.5)
    say = say_for(learner.research_id)
    reply = say("maybe I should drop to 2 hours? idk")
    assert reply.endswith("Shall I change your weekly hours to 2 (3.5 now)? Say “yes” and I will; "
                          "sessions already planned stay as they are."), reply
    assert LearnerProfile.objects.get(learner=learner).weekly_hours == 3.5
    assert say("yeah do it").startswith("Updated: 2 hours a week (it was 3.5).")
    assert LearnerProfile.objects.get(learner=learner).weekly_hours == 2


def test_an_option_named_past_the_last_asks_which_and_schedules_nothing(api, say_for):
    client, _ = api
    learner = onboarded_learner(client)
    say = say_for(learner.research_id)
    assert "Option B" in say("plan my week")
    reply = say("the third one")
    assert reply.startswith("Which one shall I schedule — A (") and not PlannedSession.objects.exists(), reply


@pytest.mark.parametrize("proposal,offer,field,value", [
    ({"act": "change", "time_of_day": "night"}, "Shall I change your best time to night (evening now)?",
     "best_time", "night"),
    ({"act": "change", "hours": "twice a week for five hours"},
     "Shall I change your weekly hours to 10 (3 now)?", "weekly_hours", 10),
])
def test_a_profile_change_only_the_model_read_is_offered_and_written_on_a_yes(api, say_for, fake_model, proposal,
                                                                               offer, field, value):
    """The words point at the new value, but that they change the profile is the model's guess
    ("My barrier is that I work night shifts twice a week" read as a new best time): code offers the
    change and writes it only on a yes; a no leaves the profile as it was. What the message says is
remembered like any other message's."""
    client, _ = api
    learner = onboarded_learner(client)  # evening, 3 h a week, confidence 6
    say = say_for(learner.research_id)
    text = "My barrier is that I work night shifts, twice a week for five hours"
    fake_model.push_to("reader", json.dumps(proposal))
    reply = say(text)
    assert reply.startswith(offer), (reply, Turn.objects.order_by("-id").first().reading)
    profile = LearnerProfile.objects.get(learner=learner)
    assert (profile.best_time, profile.weekly_hours, profile.confidence) == ("evening", 3, 6)
    # The message says more about the learner's life than the change: it is sent to extraction.
    assert OutboxMessage.objects.filter(task_name="memory.extract_facts").count() == 1
    assert say("no thanks") == "OK, I'll leave it as it is."
    profile = LearnerProfile.objects.get(learner=learner)
    assert (profile.best_time, profile.weekly_hours, profile.confidence) == ("evening", 3, 6)
    fake_model.push_to("reader", json.dumps(proposal))
    say(text)
    assert say("yes").startswith("Updated:")
    assert getattr(LearnerProfile.objects.get(learner=learner), field) == value


def test_a_move_only_the_model_read_is_offered_and_made_on_a_yes(api, say_for, fake_model):
    """The words point at a time ("night"), but that they ask for a move is the model's guess: "My
    barrier is that I work night shifts twice a week" moved the only planned session to 21:00. Code
    offers the move; a no leaves the session where it is, a yes moves it (one write, undoable)."""
    client, _ = api
    learner = onboarded_learner(client)
    saturday = services.session_schedule(learner=learner, start=_next_weekday(5, 8, learner), duration_minutes=30)
    say = say_for(learner.research_id)
    text = "My barrier is that I work night shifts twice a week."
    proposal = json.dumps({"act": "move", "session": "My barrier", "target": "night shifts twice a week"})

    def start():
        return PlannedSession.objects.get(pk=saturday.pk).planned_start

    fake_model.push_to("reader", proposal)
    reply = say(text)
    assert reply == ("Shall I move your Sat 08:00 session to Sat 21:00? Say “yes” and I will; otherwise it stays "
                     "where it is."), reply
    assert start() == saturday.planned_start and Turn.objects.order_by("-id").first().tool_calls == []
    assert say("no") == "OK — nothing changed; your sessions stay as they are."
    assert start() == saturday.planned_start
    fake_model.push_to("reader", proposal)
    say(text)
    assert say("yes").startswith("Moved: your Sat 08:00 session is now Sat 21:00 (30 min).")
    assert start().astimezone(services.learner_tz(learner)).strftime("%a %H:%M") == "Sat 21:00"
    assert PlannedSession.objects.filter(plan__learner=learner).count() == 1


def test_a_time_of_day_asked_for_one_named_session_moves_it_and_leaves_the_best_time(api, say_for, fake_model):
    """"can we make thursday's a morning one?" proposed as a change of the best time offered to change
    the profile; it names the Thursday session: the coach offers to move that session, the profile's
    best time stays as it is."""
    client, _ = api
    learner = onboarded_learner(client)
    thursday = services.session_schedule(learner=learner, start=_next_weekday(3, 19, learner), duration_minutes=45)
    best_time = LearnerProfile.objects.get(learner=learner).best_time
    say = say_for(learner.research_id)
    fake_model.push_to("reader", json.dumps({"act": "change", "time_of_day": "morning", "lang": "en"}))
    reply = say("hmm actually can we make thursday's a morning one?")
    assert reply.startswith("Shall I move your Thu 19:00 session to Thu 08:00?"), reply
    assert say("yes").startswith("Moved: your Thu 19:00 session is now Thu 08:00 (45 min)."), reply
    assert PlannedSession.objects.get(pk=thursday.pk).planned_start.astimezone(
        services.learner_tz(learner)).strftime("%a %H:%M") == "Thu 08:00"
    assert LearnerProfile.objects.get(learner=learner).best_time == best_time


def test_a_cancel_only_the_model_read_is_offered_and_made_on_a_yes(api, say_for, fake_model):
    """"I cancelled my gym membership, money is tight" proposed as a cancel of the only planned
    session: code asks, and cancels only on a yes."""
    client, _ = api
    learner = onboarded_learner(client)
    saturday = services.session_schedule(learner=learner, start=_next_weekday(5, 8, learner), duration_minutes=30)
    say = say_for(learner.research_id)
    text = "I cancelled my gym membership, money is tight"
    proposal = json.dumps({"act": "cancel", "session": "my gym membership"})

    def status():
        return PlannedSession.objects.get(pk=saturday.pk).status

    fake_model.push_to("reader", proposal)
    assert say(text) == "Shall I cancel your Sat 08:00 session? Say “yes” and I will; otherwise it stays in your plan."
    assert status() == "planned"
    assert say("no") == "OK — nothing changed; your sessions stay as they are."
    assert status() == "planned"
    fake_model.push_to("reader", proposal)
    say(text)
    assert say("yes").startswith("Cancelled: your Sat 08:00 session.")
    assert status() != "planned"


def test_a_move_to_where_the_session_already_is_moves_nothing_and_offers_nothing(api, say_for, fake_model):
    """"I prefer studying in the evening after work" proposed as a move of the Saturday 19:00
    session to the evening: it is there already, so there is no move to offer."""
    client, _ = api
    learner = onboarded_learner(client)
    saturday = services.session_schedule(learner=learner, start=_next_weekday(5, 19, learner), duration_minutes=30)
    say = say_for(learner.research_id)
    fake_model.push_to("reader", json.dumps({"act": "move", "target": "in the evening"}))
    reply = say("I prefer studying in the evening after work, my brain is fried in the mornings")
    assert reply == "Your Sat 19:00 session is already then: nothing to move.", reply
    turn = Turn.objects.order_by("-id").first()
    assert turn.offered_options == [] and turn.tool_calls == []
    assert PlannedSession.objects.get(pk=saturday.pk).planned_start == saturday.planned_start


def test_a_report_only_the_model_read_is_offered_and_logged_on_a_yes(api, say_for, fake_model):
    """"knocked out 3 leetcode mediums" names no session and no rule reads it as a report; the model
    proposes one. Code reads the outcome from the words (no negation: done), finds the one session
    not yet reported, and asks before logging; a no logs nothing, a yes logs it (undoable)."""
    from coaching.models import CheckIn

    session, shown, say = _session_due(api, say_for)
    text = "knocked out 3 leetcode mediums"
    proposal = json.dumps({"act": "report"})  # the schema lets a report carry no quote
    fake_model.push_to("reader", proposal)
    reply = say(text)
    assert reply == f"Shall I log your {shown} session as done? Say “yes” and I will.", reply
    assert not CheckIn.objects.exists() and Turn.objects.order_by("-id").first().tool_calls == []
    assert say("no") == "OK — I haven't logged anything."
    assert not CheckIn.objects.exists()
    fake_model.push_to("reader", proposal)
    say(text)
    assert f"Logged: your {shown} session as done." in say("yes")
    assert list(CheckIn.objects.values_list("session_id", "outcome")) == [(session.pk, "completed")]


def _a_session_due(api, say_for):
    """An onboarded learner with one session over and not reported: (the session, how the coach
    names it, a `say` for the learner)."""
    from coaching.tests.test_gate_and_intent_flow import _past_session

    client, _ = api
    learner = onboarded_learner(client)
    session = _past_session(learner, hours_ago=3)
    shown = session.planned_start.astimezone(services.learner_tz(learner)).strftime("%a %H:%M")
    return session, shown, say_for(learner.research_id)


def test_the_reader_is_shown_the_question_the_coach_asked_last(api, say_for, fake_model):
    """After the check-in asks how a session went, a reply the rules cannot read ("sim, fiz 90
    minutos") is proposed with that question in view, not as if nothing were pending; the report it
    proposes is asked about before it is logged."""
    from coaching.models import CheckIn

    _, shown, say = _a_session_due(api, say_for)
    fake_model.push_to("reader", json.dumps({"act": "other"}))
    asked = f"How did your session ({shown}) go — did you do it or skip it?"
    assert say("oi, tudo bem? semana corrida por aqui").endswith(asked)
    fake_model.push_to("reader", json.dumps({"act": "report"}))
    assert say("sim, fiz 90 minutos") == f"Shall I log your {shown} session as done? Say “yes” and I will."
    shown_to_model = [r for r in fake_model.requests if r.model == "reader"][-1].messages[-1]["content"]
    assert f"Coach asked: {asked}" in shown_to_model, shown_to_model
    assert not CheckIn.objects.exists()


def test_a_no_to_the_outcome_offered_that_reports_the_other_logs_the_other(api, say_for, fake_model):
    """"Shall I log your session as done?" — "no, didn't get to it": the no declines "done" and the
    rest of the message reports a skip of the same session, which is logged (read by the rules from
    the learner's words, as a skip said first would be). A plain "no" still logs nothing."""
    from coaching.models import CheckIn

    session, shown, say = _a_session_due(api, say_for)
    fake_model.push_to("reader", json.dumps({"act": "report"}))
    assert say("ugh work was crazy today") == f"Shall I log your {shown} session as done? Say “yes” and I will."
    reply = say("no, didn't get to it")
    assert f"Logged: your {shown} session as skipped." in reply, reply
    assert list(CheckIn.objects.values_list("session_id", "outcome")) == [(session.pk, "skipped")]


def test_a_yes_to_the_outcome_offered_that_reports_the_other_logs_the_other(api, say_for, fake_model):
    """"Shall I log your session as done?" — "yes, skipped it": the words report a skip; logging
    the "done" the yes seemed to accept would write what the learner did not say."""
    from coaching.models import CheckIn

    session, shown, say = _a_session_due(api, say_for)
    fake_model.push_to("reader", json.dumps({"act": "report"}))
    assert say("ugh work was crazy today") == f"Shall I log your {shown} session as done? Say “yes” and I will."
    assert f"Logged: your {shown} session as skipped." in say("yes, skipped it")
    assert list(CheckIn.objects.values_list("session_id", "outcome")) == [(session.pk, "skipped")]


def test_a_report_the_rules_cannot_tie_to_a_session_is_offered_not_logged(api, say_for, fake_model):
    """"played the whole étude!!" opens with what the learner did, but nothing ties it to the session
    due (no day, moment, amount or session word): the rules read a report they do not write. Whatever
    the model proposes (here nothing usable), the coach asks before logging."""
    from coaching.models import CheckIn

    _, shown, say = _session_due(api, say_for)
    fake_model.push_to("reader", json.dumps({"act": "other"}))
    reply = say("played the whole étude!!")
    assert reply == f"Shall I log your {shown} session as done? Say “yes” and I will.", reply
    assert not CheckIn.objects.exists()
    assert f"Logged: your {shown} session as done." in say("yes")


def test_a_report_tied_to_its_session_by_its_moment_is_logged(api, say_for, fake_model):
    from coaching.models import CheckIn

    _, shown, say = _session_due(api, say_for)
    reply = say("practised for 40 min today")
    assert f"Logged: your {shown} session as done." in reply and CheckIn.objects.count() == 1, reply


def _session_due(api, say_for):
    """An onboarded learner with one session over three hours ago and not reported: the session, how
    the coach shows it, and a sender of the learner's messages."""
    from coaching.tests.test_gate_and_intent_flow import _past_session

    client, _ = api
    learner = onboarded_learner(client)
    session = _past_session(learner, hours_ago=3)
    shown = session.planned_start.astimezone(services.learner_tz(learner)).strftime("%a %H:%M")
    return session, shown, say_for(learner.research_id)
