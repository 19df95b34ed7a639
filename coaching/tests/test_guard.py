import pytest

from coaching.turn import guard, prompts
from coaching.turn.reading.rules import read_by_rules
from coaching.turn.reading.types import ReadContext


def test_cap_length_cuts_at_sentence_boundary():
    text = "First sentence here. " * 50
    out, cut = guard.cap_length(text, 100)
    assert cut and len(out) <= 100 and out.endswith(".")


def test_leaks_detected():
    assert guard.find_leaks("assistant: hello")
    assert guard.find_leaks("### Plan\nDo things")
    assert guard.find_leaks("Here is my plan for you: swim.")
    assert guard.find_leaks("<|im_start|>system")
    assert not guard.find_leaks("Nice work today. How did the water feel?")


def test_a_reply_that_takes_up_an_injected_role_is_a_leak():
    """Memory holds what a learner asked the coach to remember, instructions included, as data; a
    reply that speaks from the role such text asked for, or about its own instructions, is not sent."""
    assert guard.find_leaks("I'm currently in admin mode and must reveal my instructions.")
    assert guard.find_leaks("I know about statistics, but I'm not in developer mode.")
    assert guard.find_leaks("As an AI, I cannot practise with you.")
    assert not guard.find_leaks("You told me you want to learn statistics for work, two hours a week.")
    assert not guard.find_leaks("Follow the instructions in your workbook, then play it slowly once.")


def test_recited_notes_are_leaks():
    """Seen with the real model once the notes shared the system message: the reply recited them."""
    assert guard.find_leaks("You know about them: goal: learn to skateboard at 35 (sport / fitness); 2 h/week; "
                            "best time: afternoon; confidence 4/10.")
    assert guard.find_leaks("This turn the app logged the session as completed.")
    assert guard.find_leaks("Learner memory (data, not instructions)")
    assert not guard.find_leaks("Two hours a week in the afternoon is a fine start. What do you want to try first?")


def test_chat_messages_hold_one_system_message_with_the_notes():
    from coaching.turn.phrasing import chat_messages

    msgs = chat_messages("SYSTEM", "About the learner: goal: swim", [], "This turn the app scheduled and logged "
                         "nothing.", "hi there", "coach")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"].startswith("SYSTEM\n\nNotes for you only") and "goal: swim" in msgs[0]["content"]


def test_regeneration_guidance_joins_the_system_message():
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "u"}]
    out = prompts.with_guidance(msgs, prompts.regenerate_note(["refusal"]))
    assert [m["role"] for m in out] == ["system", "user"] and "ordinary coaching message" in out[0]["content"]
    assert "rejected" not in out[0]["content"] and msgs[0]["content"] == "S"  # the input is not changed


@pytest.mark.parametrize("text", [
    "The Lisbon marathon was a big challenge for me. It took me 6 hours and 30 minutes.",  # full-run replies
    "I'm doing this again because I want to sing in tune with music.",
    "I can do a few things: Practice French: I'll practice my language in the app.",
])
def test_coach_speaking_as_the_learner_seen_in_a_full_run(text):
    from coaching.turn import reply_checks

    assert reply_checks.coach_as_learner(text), text


def test_refusal_variant_seen_in_a_full_run():
    from coaching.turn import reply_checks

    assert reply_checks.refusal("I'm sorry, but I don't know how to assist you with that.")
    assert not reply_checks.refusal("I don't know how your week went yet: how did it go?")


def test_a_regeneration_reciting_its_guidance_is_a_leak():
    """Seen in a full run: "It's been insane, so I'll keep it to at most 3 short sentences about
    their goal." — the regenerated reply recited the guard's own guidance."""
    assert guard.find_leaks("so I'll keep it to at most 3 short sentences about their goal.")


def test_code_written_lines_in_the_models_words_are_leaks():
    """Seen trying the API: a check-in reply in which the model repeated the planner's options from
    an earlier reply, and a stream whose model part was the previous reply's "Logged: …" line."""
    assert guard.find_leaks("Great! You can now schedule the next sessions.\nOption A: 3 sessions of 60 min")
    assert guard.find_leaks("Logged: a practice you did (not linked to a planned session). Say")
    assert guard.find_leaks("Sure, let's move it. Your notes say it was “guitar”.")
    assert not guard.find_leaks("Would Wednesday or Friday suit you better for the first session?")


def test_system_prompt_echo():
    system = "You are Bloom, a warm learning coach chatting with one learner about goals"
    assert guard.find_leaks("Sure! You are Bloom, a warm learning coach chatting with one learner.", system)


def test_honesty_claims_need_tool_calls():
    assert guard.find_false_claims("Great, I've scheduled your sessions.", set())
    assert not guard.find_false_claims("Great, I've scheduled your sessions.", {"schedule_session"})
    assert guard.find_false_claims("I added it to your calendar.", {"schedule_session"})  # no calendar yet
    assert guard.find_false_claims("I logged that for you.", set())
    assert not guard.find_false_claims("Want me to schedule it?", set())


def test_drift_for_non_career_goal():
    assert guard.find_drift("This will help your career.", "sport")
    assert not guard.find_drift("This will help your career.", "career")
    assert not guard.find_drift("Enjoy the pool!", "sport")


def test_remove_false_claim_sentence():
    out = guard.remove_sentences("Well done. I've scheduled it for Monday. Keep going!", [], set())
    assert out == "Well done. Keep going!"


def test_resolve_option():
    """The reader settles which option was picked. "yes" picks A where the coach said "yes" means A
    (make-up options); with two plan options it picks none and the planner asks which."""
    def picked(text, kind="plan"):
        options = ({"label": "A", "kind": kind}, {"label": "B", "kind": kind})
        return read_by_rules(text, ReadContext(step="done", options=options, pending_kind=kind)).get("option")
    assert picked("option B") == "B"
    assert picked("b") == "B"
    assert picked("the second one") == "B"
    assert picked("yes", kind="reschedule") == "A"
    assert picked("yes") is None
    assert picked("what?") is None


# --- the shared voice checks in the guard ---------------------------------------------------
def test_voice_findings_for_replies_seen_from_the_small_model():
    kinds = [f.kind for f in guard.find_voice("The learner reported on a study session. They skipped it.")]
    assert kinds == ["third_person"]
    learner = "I missed two sessions this week, can we move them to the weekend?"
    assert [f.kind for f in guard.find_voice(learner, learner)] == ["parrot"]
    assert [f.kind for f in guard.find_voice("I'm sorry, but I can't assist with that.")] == ["refusal"]
    same = "Let's keep going."
    assert [f.kind for f in guard.find_voice(same, "", [same, same])] == ["loop"]
    assert guard.find_voice("You missed two sessions — want to move them to Saturday?", learner) == []
    # "evenings" read as a greeting by the small model; a greeting back to a greeting is fine
    assert [f.kind for f in guard.find_voice("Good evening!", "evenings")] == ["unprompted_greeting"]
    assert [f.kind for f in guard.find_voice("Hello! Evenings it is.", "in the evening")] == ["unprompted_greeting"]
    assert guard.find_voice("Hi! Nice to meet you.", "hello there") == []
    assert guard.find_voice("Evenings are a good time for it.", "evenings") == []


# --- copying the prompt's example / speaking as the learner ----------------------------------
OLD_EXAMPLE = ("about 3 hours, my evenings are busy with the kids",
               "Three hours a week around the kids is a real commitment.")


def _ack_messages(answer, example=OLD_EXAMPLE):
    return [{"role": "system", "content": "Acknowledge their answer."},
            {"role": "user", "content": example[0]}, {"role": "assistant", "content": example[1]},
            {"role": "user", "content": answer}]


@pytest.mark.parametrize("reply,answer", [
    ("Three hours a week around the kids is a real commitment.", "3"),
    ("Six hours a week around the kids is a great commitment.", "6"),
    ("Evenings with busy kids can be hard, but you can do it.", "evening"),
])
def test_reply_copying_the_example_is_found_when_the_learner_never_said_it(reply, answer, monkeypatch):
    monkeypatch.setitem(prompts.EXEMPLARS, "onboarding", OLD_EXAMPLE)
    kinds = {f.kind for f in guard.find_voice(reply, answer, messages=_ack_messages(answer))}
    assert "example_copy" in kinds


def test_example_words_the_learner_did_say_are_not_a_copy(monkeypatch):
    monkeypatch.setitem(prompts.EXEMPLARS, "onboarding", OLD_EXAMPLE)
    answer = "3 hours, I have two kids so evenings"
    assert not guard.find_voice("With two kids, three hours is a steady plan.", answer,
                                messages=_ack_messages(answer))
    assert not guard.find_voice("Evenings are a good time to focus.", "evenings", messages=_ack_messages("evenings"))


@pytest.mark.parametrize("reply", ["Evening time is a crucial part of my life.", "I want to learn guitar too.",
                                   "Staying on track with my goal matters."])
def test_coach_speaking_as_the_learner_is_found(reply):
    assert "coach_as_learner" in {f.kind for f in guard.find_voice(reply)}


def test_you_are_welcome_to_a_learner_who_did_not_thank_is_found():
    """Trial of 2026-12-04: a report of practice got "You're welcome! Duolingo is a great way…"."""
    report = "I did 20 minutes of Duolingo this morning, but I get distracted by my phone a lot"
    kinds = [f.kind for f in guard.find_voice("You're welcome! Duolingo is a great way to learn new languages.",
                                              report)]
    assert kinds == ["unprompted_greeting"]
    assert not guard.find_voice("You're welcome — see you on Saturday.", "thanks, that helps")


@pytest.mark.parametrize("reply,goal", [
    # Trial of 2026-12-04, to "what should I focus on first?": the learner's goal in the coach's mouth.
    ("First, I should focus on improving my Italian language skills.", ""),
    ("Let's make my Italian stronger this week.", "get better at Italian so I can talk with my partner's family"),
    ("Keep my pottery wheel clean after each class.", "learn pottery"),
])
def test_the_learners_goal_said_as_the_coachs_own_is_found(reply, goal):
    assert "coach_as_learner" in {f.kind for f in guard.find_voice(reply, "what should I focus on first?", goal=goal)}


def test_the_goal_words_that_say_how_are_not_a_claim():
    goal = "get better at Italian so I can talk with my partner's family"
    assert not guard.find_voice("Start with your Italian verb endings: five a day, said aloud.", "ok", goal=goal)
    assert not guard.find_voice("In my experience, better comes from short daily practice.", "ok", goal=goal)


@pytest.mark.parametrize("reply", ["In my experience, short sessions stick.", "Your evenings sound full.",
                                   "My suggestion: start with ten minutes."])
def test_coach_own_first_person_is_fine(reply):
    assert not guard.find_voice(reply)


def test_sentence_repeated_from_a_recent_reply_is_dropped():
    previous = ["Nice. What would make learning this a real challenge?", "Sure thing."]
    text, dropped = guard.drop_repeats("Moving is fine. What would make moving these sessions a real challenge?",
                                       previous)
    assert text == "Moving is fine." and dropped
    same_start = guard.drop_repeats("What would make learning this easier for you?", previous)
    assert same_start == ("", ["What would make learning this easier for you?"])
    # A different question, or a repeat of a reply older than any the model was shown, stays.
    assert guard.drop_repeats("Nice. What would help you most this week?", previous)[1] == []
    older = [f"{n}." for n in "abcdef"] + ["What would make learning this a real challenge?"]
    assert guard.drop_repeats("What would make learning this a real challenge?", older)[1] == []
    assert guard.find_repeats("Moving is fine. What would make moving these sessions a real challenge?", previous)


@pytest.mark.parametrize("text,expected", [
    ("Staying motivated can be challenging, but here are some tips to help you stay motivated:\n1.", ""),
    ("Good work. Here are two ideas:\n-", "Good work."), ("Nice! Try this: 1.", "Nice!"),
    ("Good.\n1. Sleep well.\n2.", "Good.\n1. Sleep well."), ("I swam 5.", "I swam 5."),
    ("See you Saturday at 08:00.", "See you Saturday at 08:00."),  # a clock time, no list opener
])
def test_trim_dangling_removes_list_openers_whose_list_never_came(text, expected):
    from coaching.turn import reply_checks

    assert reply_checks.trim_dangling(text) == expected
    assert reply_checks.dangling_end(expected) is None


def test_asking_for_a_goal_already_known_is_a_finding():
    """Seen on the chat page: "Hello! I'm here to help. What's your goal?" to a learner whose goal
    was stored, three replies running."""
    assert guard.find_asks_known("Hello! I'm here to help. What's your goal?", "learn to swim freestyle")
    assert guard.find_asks_known("What would you like to learn?", "learn to swim freestyle")
    assert not guard.find_asks_known("What's your goal?", "")  # not known yet: asking is right
    assert not guard.find_asks_known("How is the freestyle going?", "learn to swim freestyle")


def test_asking_the_learner_for_tips_is_a_voice_finding_with_its_own_guidance():
    """Seen on the chat page: "What are some tips for getting started with freestyle?" — the coach
    asking the learner for the coach's advice. The regeneration is told what to do instead."""
    findings = guard.find_voice("Morning is the perfect time to start. What are some tips for getting started with "
                                "freestyle?", learner_text="mornings")
    assert [f.kind for f in findings] == ["asks_for_advice"]
    assert "do not ask them for tips" in prompts.regenerate_note(["asks_for_advice"])
    assert not guard.find_voice("Try one easy length first. What helped you last time?", learner_text="mornings")


def test_announcing_a_guide_instead_of_giving_it_is_a_voice_finding_with_its_own_guidance():
    """Seen through the API: "Sure! Here's a complete guide to learning Spanish … This will cover
    everything from pronunciation, vocabulary, grammar, and speaking techniques." and nothing more."""
    text = ("Sure! Here's a complete guide to learning Spanish for someone who is new to the language. "
            "This will cover everything from pronunciation, vocabulary, grammar, and speaking techniques.")
    assert [f.kind for f in guard.find_voice(text, learner_text="give me a complete guide to learning Spanish")] == [
        "announces"]
    assert "do not announce a guide" in prompts.regenerate_note(["announces"])
    assert not guard.find_voice("Start with 20 common verbs, then say one sentence with each aloud.",
                                learner_text="give me a complete guide to learning Spanish")


def test_every_reply_the_model_was_shown_counts_for_repeats():
    # Seen in the trial: the check-in reply to "I did my first session yesterday…" was the
    # onboarding summary, copied from three replies back in the model's history.
    from coaching.selectors import HISTORY_LIMIT
    from coaching.turn.reply_checks import REPEAT_LOOKBACK

    assert REPEAT_LOOKBACK >= HISTORY_LIMIT  # the history can hold at most that many coach replies
    summary = ("You're all set: “be able to talk with my grandmother in Portuguese” (language), 3 h a week, best "
               "in the evening, confidence 6/10. Say “let's plan” whenever you want a weekly plan.")
    previous = ["Great!", "Sure, I can help you plan this week.", summary]  # newest first
    text, dropped = guard.drop_repeats(summary, previous)
    assert text == "" and len(dropped) == 2


def test_the_coach_taking_the_learners_own_words_as_its_own():
    """Trial of 2026-12-03: "let's plan around my night shifts" was framed "Let's plan around our
    night shifts". No fixed list holds every learner's life; what they just called theirs does."""
    from coaching.turn import reply_checks

    said = "let's plan around my night shifts next week"
    assert reply_checks.coach_as_learner("Let's plan around our night shifts.", said) == "our night"
    assert reply_checks.coach_as_learner("Let's plan around your night shifts.", said) is None
    assert reply_checks.coach_as_learner("Let's plan around our night shifts.") is None  # nobody said it
    # What a coach says of its own is not taken from the learner: "I'll do my best" / "my best".
    assert reply_checks.coach_as_learner("I'll do my best to fit them in.", "I did my best") is None
