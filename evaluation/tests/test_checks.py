"""Deterministic checks: each one flags the failure it is named after and leaves ordinary coaching
replies alone."""

import pytest

from evaluation.checks import CheckConfig, CheckContext, run_checks
from evaluation.checks.base import word_count
from evaluation.checks.behaviour import check_goal_drift, check_premature_advice, check_unperformed_action
from evaluation.checks.text import check_emoji, check_format_density, check_length, check_scaffold_leak, emoji_count
from evaluation.checks.voice import (
    check_goal_is_greeting,
    check_loop,
    check_parrot,
    check_profile_unsupported,
    check_refusal,
    check_third_person,
)

CLEAN = "That's a real jump from 14 to 16 km! How is the knee feeling today, compared with after the run?"


@pytest.mark.parametrize("text,marker", [
    ("Here is my plan for you: run three times a week.", "plan preamble"),
    ("Here's the response: keep going!", "plan preamble"),
    ("<|im_start|>assistant\nGreat job", "template token"),
    ("Great job<end_of_turn>", "template token"),
    ("assistant: Great job on the swim", "role tag"),
    ("**Coach:** Nice work today", "role tag"),
    ("## Learner Context\n**Goal:** swim 1 km (sport)", "prompt section"),
    ("### Instructions\nBe concise.", "prompt section"),
    ("- [barrier] Left knee gets sore", "context label"),
    ("As an AI, I can't feel proud, but well done.", "self as model"),
    ("You are Bloom, a warm learning coach chatting with one learner.", "prompt echo"),
    ("Sure! {learner_name}, let's go", "template placeholder"),
])
def test_scaffold_leak_flags_markers(text, marker):
    result = check_scaffold_leak(text)
    assert result.flag, text
    assert marker in result.detail


def test_scaffold_leak_ignores_normal_reply_and_colons_mid_sentence():
    assert not check_scaffold_leak(CLEAN).flag
    assert not check_scaffold_leak("One idea: try the run-walk intervals on Tuesday. Does that sound doable?").flag
    assert not check_scaffold_leak("Here is a thought — what if Saturday was your long session?").flag


def test_scaffold_leak_detects_system_prompt_echo_by_shared_words():
    system = "Write plain conversational text: at most 3 short sentences, no headings, no lists, no markdown."
    leaked = "Okay! I will write plain conversational text at most 3 short sentences no headings. Swim on!"
    ctx = CheckContext(system_prompt=system)
    assert check_scaffold_leak(leaked, ctx).flag
    assert "system-prompt echo" in check_scaffold_leak(leaked, ctx).detail
    # A few shared words in a row are coincidence, not an echo.
    assert not check_scaffold_leak("Keep it short and plain: one lap, then rest.", ctx).flag


def test_length_cap_counts_words():
    cfg = CheckConfig(max_words=10)
    assert word_count("It's a 5-minute warm-up, then go.") == 6
    assert not check_length("one two three four five six seven eight nine ten", cfg).flag
    over = check_length("one two three four five six seven eight nine ten eleven", cfg)
    assert over.flag and over.value == 11


def test_format_density_flags_report_style_and_not_chat():
    report = ("## Your plan\n**Goal:** swim\n- Monday: drills\n- Wednesday: laps\n- Friday: rest\n"
              "**Tip:** breathe out slowly")
    result = check_format_density(report)
    assert result.flag
    assert "bullets=3" in result.detail and "bold=2" in result.detail and "headers=1" in result.detail
    assert not check_format_density(CLEAN).flag
    # One bold word in a long chatty reply is not density.
    assert not check_format_density("That is **great** news. " + "Keep going with the plan you made. " * 10).flag


def test_emoji_count_and_flag():
    assert emoji_count("Well done 🎉🎉🥳") == 3
    assert check_emoji("Well done 🎉🎉🥳").flag
    assert not check_emoji("Well done 🎉").flag
    assert emoji_count("Plain text, no emoji: ok!") == 0


def test_premature_advice_only_before_onboarding_completes():
    advice = "You should practise scales every day and I recommend a metronome."
    onboarding = CheckContext(onboarding_complete=False)
    result = check_premature_advice(advice, onboarding)
    assert result.flag and result.value == 2
    assert not check_premature_advice(advice, CheckContext(onboarding_complete=True)).flag
    assert not check_premature_advice("Got it, about 3 hours a week. When in the day works best?", onboarding).flag


@pytest.mark.parametrize("text", [
    "Done! I've added it to your calendar for 7pm.",
    "I added the session to your calendar.",
    "It's been added to your calendar.",
    "I have set a reminder for 7am tomorrow.",
    "I've saved your plan for this week.",
])
def test_unperformed_action_claims_without_tool_calls(text):
    assert check_unperformed_action(text, CheckContext(tool_calls=())).flag


def test_unperformed_action_claim_backed_by_a_tool_call_is_fine():
    text = "Done! I've added it to your calendar for 7pm."
    assert not check_unperformed_action(text, CheckContext(tool_calls=("schedule_session",))).flag
    # Honest answers about the calendar are not claims.
    honest = "I haven't added anything to your calendar — want me to schedule the 7pm session?"
    assert not check_unperformed_action(honest, CheckContext()).flag


def test_goal_drift_flags_career_framing_for_non_career_goal():
    ctx = CheckContext(goal_category="sport", primary_goal="swim 1 km")
    drift = check_goal_drift("Swimming can really boost your career and help you in job interviews.", ctx)
    assert drift.flag
    assert "career" in drift.detail and "interviews" in drift.detail
    assert not check_goal_drift(CLEAN, ctx).flag


def test_goal_drift_allows_career_for_career_goal_and_learner_own_words():
    assert not check_goal_drift("Let's prepare for the interview.", CheckContext(goal_category="career")).flag
    ctx = CheckContext(goal_category="music", learner_text="this is not for my job, just fun")
    assert not check_goal_drift("Got it — nothing to do with your job, just for fun.", ctx).flag


def test_goal_drift_uses_transcript_must_not_mention_terms():
    ctx = CheckContext(goal_category="art", must_not_mention=("side hustle", "sell"))
    assert check_goal_drift("You could sell the bowls as a side hustle!", ctx).flag
    # Whole words only: "seller" is not "sell", "jobs" is its own term.
    assert not check_goal_drift("Bestseller glazes are fun to try.", CheckContext(must_not_mention=("sell",))).flag


def test_run_checks_returns_every_check_as_plain_dicts():
    out = run_checks(CLEAN, CheckContext(goal_category="sport"))
    assert set(out) == {"scaffold_leak", "over_length", "repetition", "sentence_repeat", "format_density", "emoji",
                        "premature_advice", "unperformed_action", "goal_drift", "third_person", "parrot", "refusal",
                        "loop", "goal_is_greeting", "profile_unsupported", "example_copy", "coach_as_learner",
                        "dangling_end", "unprompted_greeting", "asks_known_goal",
                        "asks_for_advice", "announces_content", "dodge"}
    assert all(set(v) == {"flag", "value", "detail"} for v in out.values())
    assert not any(v["flag"] for v in out.values())


def test_scaffold_leak_flags_context_block_fences_and_narrating_the_learner():
    assert "context fence" in check_scaffold_leak("Learner memory (data, not instructions)\n<<<MEMORY\n- x").detail
    # Narrating the learner is its own check now (third_person), not a scaffold leak.
    assert check_third_person("The learner's goal is to cook healthy dinners.", CheckContext()).flag
    ctx = CheckContext(context_snapshot="Learner goal: finish the Lisbon marathon in October (sport / fitness); "
                                        "6 h/week; best time: morning; confidence 6/10.")
    echo = "Learner goal: finish the Lisbon marathon in October (sport / fitness); 6 h/week; best time: morning."
    assert "context echo" in check_scaffold_leak(echo, ctx).detail
    assert not check_scaffold_leak("Sixteen km before the Lisbon marathon in October is huge!", ctx).flag


def test_code_rendered_templates_are_not_counted_as_model_drift_or_advice():
    question = "Which area fits your goal best: language, programming, career, school/exams, music, or other?"
    reply = f"Spanish, lovely.\n\n{question}"
    ctx = CheckContext(goal_category="", must_not_mention=("career",), onboarding_complete=False,
                       template_texts=(question,))
    assert not check_goal_drift(reply, ctx).flag
    # The same words from the model itself still count.
    assert check_goal_drift("Spanish could help your career.", ctx).flag
    tip = "Make sure to practise daily."
    assert not check_premature_advice(f"Noted. {tip}", CheckContext(onboarding_complete=False,
                                                                    template_texts=(tip,))).flag


def test_repetition_flags_loops_not_normal_replies():
    from evaluation.checks.text import check_repetition

    loop = "I'm not sure how to do this. " * 4
    assert check_repetition(loop).flag
    trigram_loop = "I would say 3 hours a week, " * 4 + "maybe"  # one long "sentence", looping
    assert check_repetition(trigram_loop).flag
    assert not check_repetition(CLEAN).flag
    assert not check_repetition("Great run! Great pace too. How did the knee feel at the end of the 16k?").flag


def test_prompt_vocabulary_and_learner_role_echo_are_leaks():
    assert "prompt vocabulary" in check_scaffold_leak("I think you're going to have to use a lot of markdown.").detail
    learner = "I want to get better at stuff. I feel like I'm wasting my evenings"
    ctx = CheckContext(learner_text=learner)
    # Echoing the learner is the `parrot` check, no longer counted as a scaffold leak.
    assert check_parrot(f"I am a student. {learner}.", ctx).flag
    assert not check_parrot("Wasting evenings feels rotten. What would you rather do with them?", ctx).flag


# --- defect classes seen with a small model that the shipped set and the guard used to pass ---------
@pytest.mark.parametrize("text", [
    "The learner reported on a study session. They skipped it.",
    "The learner missed two sessions, so we should move them.",
    "It sounds like the user's goal is to swim.",
])
def test_third_person_flags_replies_about_the_learner(text):
    assert check_third_person(text, CheckContext()).flag


def test_third_person_leaves_second_person_alone():
    assert not check_third_person("You missed two sessions — shall we move them to Thursday?", CheckContext()).flag
    assert not check_third_person("As a learner of Spanish, you're doing great.", CheckContext()).flag


def test_parrot_flags_the_learners_message_back_verbatim():
    learner = "I missed two sessions this week, can we move them to the weekend?"
    assert check_parrot(learner, CheckContext(learner_text=learner)).flag
    assert check_parrot(f"Sure! {learner}", CheckContext(learner_text=learner)).flag
    short = "managed 400m today without stopping!"
    assert check_parrot("managed 400m today without stopping", CheckContext(learner_text=short)).flag
    # Quoting a few words inside a real reply is reflection, not parroting.
    assert not check_parrot("400 m without stopping is a big step! How did your breathing feel?",
                            CheckContext(learner_text=short)).flag


@pytest.mark.parametrize("text", ["I'm sorry, but I can't assist with that.", "I cannot help with that request.",
                                  "I'm unable to provide that.", "As an AI, I don't have feelings."])
def test_refusal_flags_refusals(text):
    assert check_refusal(text, CheckContext()).flag


def test_refusal_leaves_ordinary_replies_alone():
    assert not check_refusal("Sorry to hear the week was rough. What got in the way?", CheckContext()).flag
    assert not check_refusal("You can't do everything at once, and that's fine.", CheckContext()).flag


def test_loop_flags_the_same_text_the_third_time():
    pick = "Please pick one: language, programming, career, school/exams, music, art, sport/fitness, or other."
    assert not check_loop(pick, CheckContext(previous_replies=(pick,))).flag
    assert check_loop(pick, CheckContext(previous_replies=(pick, "Great!", pick))).flag
    assert not check_loop("Nice work.", CheckContext(previous_replies=("Nice work today.",) * 3)).flag


def test_goal_is_greeting_flags_hi_stored_as_the_goal():
    assert check_goal_is_greeting("", CheckContext(profile_updates=(("primary_goal", "hi"),))).flag
    assert check_goal_is_greeting("", CheckContext(profile_updates=(("primary_goal", "Hello!"),))).flag
    assert not check_goal_is_greeting("", CheckContext(profile_updates=(("primary_goal", "learn Spanish"),))).flag
    assert not check_goal_is_greeting("", CheckContext()).flag


def test_profile_unsupported_flags_values_the_learner_never_gave():
    history = ("hi", "I want to learn guitar", "maybe 3 hours")
    ok = CheckContext(learner_history=history, profile_updates=(("weekly_hours", "3.0"),))
    assert not check_profile_unsupported("", ok).flag
    invented = CheckContext(learner_history=history, profile_updates=(("weekly_hours", "5.0"),))
    assert check_profile_unsupported("", invented).flag
    wrong_time = CheckContext(learner_history=("I have two kids so evenings are chaos",),
                              profile_updates=(("best_time", "morning"),))
    assert check_profile_unsupported("", wrong_time).flag
    # "other" and "flexible" are the defaults the gate announces after two unmatched answers.
    announced = CheckContext(learner_history=("hmm",), profile_updates=(("goal_category", "other"),))
    assert not check_profile_unsupported("", announced).flag
    goal = CheckContext(learner_history=("hello",), profile_updates=(("primary_goal", "hello"),))
    assert check_profile_unsupported("", goal).flag


def test_example_copy_flags_the_retired_onboarding_example_and_not_the_learners_own_words():
    from evaluation.checks.voice import check_example_copy

    ctx = CheckContext(learner_text="6", learner_history=("learn guitar", "6"))
    assert check_example_copy("Six hours a week around the kids is a great commitment.", ctx).flag
    said = CheckContext(learner_text="3 hours, busy with my kids", learner_history=("3 hours, busy with my kids",))
    assert not check_example_copy("Three hours with the kids nearby is a steady plan.", said).flag
    assert not check_example_copy(CLEAN, CheckContext()).flag


def test_coach_as_learner_flags_the_coach_speaking_about_my_life():
    from evaluation.checks.voice import check_coach_as_learner

    assert check_coach_as_learner("Evening time is a crucial part of my life.", CheckContext()).flag
    assert not check_coach_as_learner("In my experience, evenings work well for you.", CheckContext()).flag
    # What this learner called theirs, taken as the coach's own (trial of 2026-12-03).
    ctx = CheckContext(learner_text="let's plan around my night shifts next week")
    assert check_coach_as_learner("Let's plan around our night shifts.", ctx).flag
    assert not check_coach_as_learner("Let's plan around your night shifts.", ctx).flag


@pytest.mark.parametrize("text,flag", [
    # Seen on the chat page (learner's goal: swim freestyle; the learner had said "mornings").
    ("Morning is the perfect time to start your training. What are some tips for getting started with freestyle?",
     True),
    ("Do you have any tips for staying consistent?", True),
    ("What advice do you have for beginners?", True),
    ("Any suggestions?", True),
    # Coaching questions about the learner's own experience, and a reflection technique.
    ("What helped you stay consistent last week?", False),
    ("What advice would you give yourself on a tired evening?", False),
    ("Here are two tips: warm up first, then swim one easy length.", False),
])
def test_asks_for_advice_flags_the_coach_asking_the_learner_for_tips(text, flag):
    from evaluation.checks.voice import check_asks_for_advice

    assert check_asks_for_advice(text, CheckContext()).flag is flag


@pytest.mark.parametrize("text,flag", [
    # Seen through the API (the plain-text grammar on): the promise, then the reply ends.
    ("Sure! Here's a complete guide to learning Spanish for someone who is new to the language. This will cover "
     "everything from pronunciation, vocabulary, grammar, and speaking techniques.", True),
    ("Here are some tips for freestyle breathing that can help you stay calm.", False),
    ("Here is a quick list: warm up, then swim two easy lengths.", False),  # the points follow
    ("Here's a step-by-step guide to your first flip turn.", True),
    ("Start with two easy lengths, then practise breathing every third stroke.", False),
    # Any few words between the article and the promised thing; a typographic apostrophe.
    ("Sure, happy to help. Here's a very detailed essay on discipline for your practice. Let me know!", True),
    ("Certainly! Here’s a comprehensive, practical guide to sourdough, including starter and flour.", True),
    ("Here's a short outline: knead, rest, shape.", False),
])
def test_announces_content_flags_a_promised_guide(text, flag):
    from evaluation.checks.voice import check_announces_content

    assert check_announces_content(text, CheckContext()).flag is flag


@pytest.mark.parametrize("text,flag", [
    ("Staying motivated can be challenging, but here are some tips to help you stay motivated:\n1.", True),
    ("Here is what to try:", True), ("Good. Try these: -", True), ("Sleep well. 2.", True),
    ("I swam 5.", False), ("Two ideas: rest and water.", False), (CLEAN, False),
])
def test_dangling_end_flags_a_reply_ending_on_a_list_opener(text, flag):
    from evaluation.checks.voice import check_dangling_end

    assert check_dangling_end(text, CheckContext()).flag is flag


# --- a sentence said twice in one reply ------------------------------------------------------
@pytest.mark.parametrize("text,copies", [
    ("Keep going with the scales. You can do it. Keep going with the scales!", 1),
    ("You did well today. What felt hardest?\nyou did WELL today", 1),  # case, punctuation, line break aside
    ("You’ve got this, really. Try one more lap. You've got this, really.", 1),  # curly and straight apostrophe
    ("Nice run this morning. Nice run this morning. Nice run this morning.", 2),
])
def test_sentence_repeat_flags_a_reply_that_says_a_sentence_again(text, copies):
    from evaluation.checks.text import check_sentence_repeat

    result = check_sentence_repeat(text)
    assert result.flag and result.value == copies, result


@pytest.mark.parametrize("text", [
    CLEAN,
    "Great! Great! What did you practise today?",  # too short to be a repeated sentence
    "You practised the scales today. Tomorrow you practised the scales? No: tomorrow you rest.",
    "Keep going with the scales, and keep going with the chords.",  # repeated words, not a repeated sentence
])
def test_sentence_repeat_leaves_replies_without_a_repeated_sentence_alone(text):
    from evaluation.checks.text import check_sentence_repeat

    assert not check_sentence_repeat(text).flag


def test_sentence_repeat_is_one_of_the_checks_every_reply_gets():
    checks = run_checks("Well done on the swim today. Well done on the swim today.", CheckContext())
    assert checks["sentence_repeat"]["flag"] is True
    assert run_checks(CLEAN, CheckContext())["sentence_repeat"]["flag"] is False


def test_unprompted_greeting_is_scored_like_the_guard_blocks_it():
    from evaluation.checks.voice import check_unprompted_greeting

    assert check_unprompted_greeting("Good evening! Evenings it is.", CheckContext(learner_text="evenings")).flag
    assert not check_unprompted_greeting("Hi! Welcome.", CheckContext(learner_text="hello")).flag
    assert not check_unprompted_greeting("Evenings suit you.", CheckContext(learner_text="evenings")).flag


def test_code_lines_copied_into_the_models_words_are_a_leak_but_code_writing_them_is_not():
    """Trying the API: a check-in reply whose model part repeated an earlier reply's options."""
    from evaluation.checks.text import check_scaffold_leak

    options = "Option A: 3 sessions of 60 min (Wed, Fri, Sun at 19:00)\nReply “option A” or “option B”."
    copied = f"Great! You can now schedule the next sessions.\n{options}\n\nLogged: a practice you did."
    ctx = CheckContext(template_texts=("Logged: a practice you did.",))
    assert check_scaffold_leak(copied, ctx).flag  # the options are in the model's part
    assert not check_scaffold_leak(f"Good plan.\n\n{options}", CheckContext(template_texts=(options,))).flag
