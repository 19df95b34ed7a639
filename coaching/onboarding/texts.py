"""Everything the gate says, rendered by code: the question of each step, two re-prompt phrasings
per step (alternated), lead-ins naming a non-answer, notes about defaults and corrections, the
confirmation of what was saved and the completion summary."""

from __future__ import annotations

from decimal import Decimal

from coaching.models import GoalCategory, OnboardingStep
from coaching.onboarding.state import OnboardingAnswers, StepOutcome

QUESTIONS = {
    OnboardingStep.GOAL: "What would you like to learn or get better at?",
    OnboardingStep.CATEGORY: (
        "Which area fits your goal best: language, programming, career, school/exams, music, art, "
        "sport/fitness, or other?"
    ),
    OnboardingStep.WEEKLY_HOURS: "About how many hours a week can you spend on it (for example 3, or 2.5)?",
    OnboardingStep.BEST_TIME: (
        "When do you usually have the most energy for it: morning, midday, afternoon, evening or night?"
    ),
    OnboardingStep.CONFIDENCE: "On a scale from 1 to 10, how confident are you that you can keep this up?",
}

# Re-prompts after an answer the gate could not take. Two phrasings per step, alternated, so the
# same templated text is never sent twice in a row however long a learner stays on a step.
CLARIFY = {
    OnboardingStep.GOAL: (
        "To get started, tell me one thing you'd like to learn or get better at — for example “learn to swim” "
        "or “pass my French B1 exam”."
    ),
    OnboardingStep.CATEGORY: (
        "Which of these is closest: language, programming, career, school/exams, music, art, sport/fitness — "
        "or “other” if none fits?"
    ),
    OnboardingStep.WEEKLY_HOURS: (
        "I need a number of hours per week between 0.5 and 80 — for example “3” or “2.5 hours”."
    ),
    OnboardingStep.BEST_TIME: (
        "Which time of day suits you: morning, midday, afternoon, evening, night — or “flexible”?"
    ),
    OnboardingStep.CONFIDENCE: "Please give a whole number from 1 (not at all) to 10 (completely).",
}
CLARIFY_ALT = {
    OnboardingStep.GOAL: (
        "A few words are enough: what's one skill you'd like to work on, like “play guitar” or “run a 5k”?"
    ),
    OnboardingStep.CATEGORY: (
        "Just one word is fine — language, programming, career, school, music, art, sport, or other."
    ),
    OnboardingStep.WEEKLY_HOURS: "Roughly how much time a week is realistic for you — 1 hour? 3 hours? 5?",
    OnboardingStep.BEST_TIME: "Do mornings, afternoons or evenings usually work better for you (or is it flexible)?",
    OnboardingStep.CONFIDENCE: "If 1 is “probably not” and 10 is “definitely”, what number feels honest today?",
}
# What the learner's non-answer was, said back in one short lead-in before the re-prompt.
LEAD_INS = {
    "greeting": "Hi, good to meet you! ",
    "question": "Happy to get to that in a moment — a few quick questions first so the plan fits you. ",
    "refusal": "No problem — it only helps me fit your plan to you, and you can change any answer later. ",
    "off_topic": "Let's keep to your learning for now. ",
    "about": "I'm Bloom: I help you pick a learning goal, plan sessions that fit your week and check in on them. ",
    "vague_goal": "Let's make that a bit more concrete. ",
    "other_step": "I'll ask about time and days in a moment. ",
    "plan_request": ("Your plan comes right after a few quick answers — they decide how long your sessions are "
                     "and when they fit. "),
    "unsure": "I want to get this right rather than guess. ",
}
# An area named instead of a goal ("something with music maybe"): said back, with two goals of
# that area as examples of what the goal question wants.
AREA_ONLY = "{area} is a good place to start. What's one thing you'd like to do in it — for example “{a}” or “{b}”?"
AREA_EXAMPLES = {
    GoalCategory.LANGUAGE: ("learn Spanish for a trip", "pass my French B1 exam"),
    GoalCategory.PROGRAMMING: ("learn Python", "build my first website"),
    GoalCategory.CAREER: ("get better at public speaking", "prepare for job interviews"),
    GoalCategory.ACADEMIC: ("pass my calculus exam", "write better essays"),
    GoalCategory.MUSIC: ("learn to play the piano", "sing in a choir"),
    GoalCategory.ART: ("learn to draw portraits", "try watercolour painting"),
    GoalCategory.SPORT: ("run a 5k", "swim twice a week"),
}
# An amount per evening (or session) given for the weekly hours: said back, asked as a week's total.
PER_OCCASION = ("{amount} each {each} — how much is that in a week, all together? For example “{five:f} hours” "
                "for five {each}s.")
NOTES = {
    "category_other": ("I'll file “{goal}” under “other” for now — say “actually, it's music” (or another area) "
                       "any time to change it."),
    "time_flexible": "I'll note your time as flexible for now — tell me a time of day whenever you like.",
    "corrected": "Updated: {what}.",
}


def question_for(step: str, *, rejected_in_row: int = -1, last_reply: str = "") -> str:
    """The templated question for `step`: the plain question after an accepted answer, one of two
    re-prompt phrasings (alternating) after a rejection — and never the text the previous coach
    reply already carried, so the same templated question is never sent twice in a row."""
    if rejected_in_row < 0:
        # After an accepted answer (a correction keeps the step), the next phrasing is the friendly
        # one: "I need a number of hours per week between 0.5 and 80" read as an error right under
        # "Updated: your goal is …".
        order = (QUESTIONS, CLARIFY_ALT, CLARIFY)
    else:
        order = (CLARIFY, CLARIFY_ALT) if rejected_in_row % 2 == 0 else (CLARIFY_ALT, CLARIFY)
    for table in order:
        if table[step] not in last_reply:
            return table[step]
    return order[-1][step]


def reprompt(outcome: StepOutcome, rejected_in_row: int, last_reply: str = "") -> str:
    """The templated text for a rejected answer: a lead-in naming what the message was, then the
    step's question in a phrasing the previous reply did not use."""
    if (outcome.kind in ("per_occasion", "sittings", "two_scores", "two_amounts") and outcome.error
            and outcome.error not in last_reply):
        return outcome.error  # rendered by the gate with what the learner said
    if outcome.kind == "area_only" and outcome.error in AREA_EXAMPLES:
        area = dict(GoalCategory.choices)[outcome.error].split(" / ")[0]
        text = AREA_ONLY.format(area=area, a=AREA_EXAMPLES[outcome.error][0], b=AREA_EXAMPLES[outcome.error][1])
        if text not in last_reply:
            return text
    return LEAD_INS.get(outcome.kind, "") + question_for(outcome.step, rejected_in_row=rejected_in_row,
                                                         last_reply=last_reply)


_CONFIRM = {
    "primary_goal": "Your goal: “{value}”.",
    "goal_category": "Area: {value}.",
    "weekly_hours": "{value} h a week.",
    "best_time": "Best time: {value}.",
}


def confirmation(updates: dict) -> str:
    """Every value the gate saves is stated back to the learner (so a wrong reading is visible and
    can be corrected with "actually …")."""
    parts = []
    for name, template in _CONFIRM.items():
        if name not in updates or updates[name] in (None, ""):
            continue
        value = updates[name]
        if name == "goal_category":
            value = dict(GoalCategory.choices).get(value, value).lower()
        elif isinstance(value, Decimal):
            value = f"{value.normalize():f}"
        parts.append(template.format(value=value))
    if updates.get("confidence") is not None and updates.get("onboarding_step") != OnboardingStep.DONE:
        parts.append(f"Confidence {updates['confidence']}/10.")
    return " ".join(parts)


def completion_summary(answers: OnboardingAnswers) -> str:
    label = dict(GoalCategory.choices).get(answers.goal_category, answers.goal_category)
    hours = f"{answers.weekly_hours.normalize():f}" if answers.weekly_hours is not None else "?"
    best = _best_time_words(answers.best_time)
    return (
        f"You're all set: “{answers.primary_goal}” ({label.lower()}), {hours} h a week, {best}, "
        f"confidence {answers.confidence}/10. Say “let's plan” whenever you want a weekly plan."
    )


def _best_time_words(best_time: str) -> str:
    """The best time in words: "best in the evening", "best at night", "any time of day"."""
    return {"flexible": "any time of day", "night": "best at night", "midday": "best around midday"}.get(
        best_time, f"best in the {best_time}")
