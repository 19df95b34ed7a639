"""The onboarding gate: a deterministic state machine (goal → category → weekly hours → best time →
confidence). Every answer is validated HERE, in code. The model never decides whether a step is
done and never picks the category; it may only phrase an acknowledgement (coaching/turn/onboarding.py).
Pure functions: no database, no model — unit-tested exhaustively.

What counts as an answer: a greeting, filler, a bare question, a refusal or an off-topic line is
never an answer, at any step (small_talk.py, answers.py). A goal stated before it was asked ("hi!
I want to learn Spanish") is taken; so are hours or a confidence stated with their unit alongside
it. The category is read by rules from the answer, the goal itself and everyday words ("for
work", "it's for uni") (values.py); after two unmatched answers at the category step the gate
chooses "other" and says so (at the time step: "flexible") (gate.py). Re-prompts alternate
between two phrasings, so the same templated text never comes twice in a row (texts.py).
"Actually, my goal is …" corrects an earlier answer at any step.

The names below are the gate's interface for the turn, the services and evaluation."""

from coaching.onboarding.answers import (
    extract_goal,
    goal_correction,
    goal_from_its_verb,
    is_vague,
    later_goal,
    named_change,
    non_answer_kind,
    time_correction,
)
from coaching.onboarding.gate import STEPS, advance, apply_values, first_missing_step
from coaching.onboarding.state import OnboardingAnswers, StepOutcome
from coaching.onboarding.texts import (
    CLARIFY,
    CLARIFY_ALT,
    LEAD_INS,
    NOTES,
    QUESTIONS,
    completion_summary,
    confirmation,
    question_for,
    reprompt,
)
from coaching.onboarding.values import (
    map_category,
    parse_best_time,
    parse_category_answer,
    parse_confidence,
    parse_hours,
)

__all__ = [
    "CLARIFY", "CLARIFY_ALT", "LEAD_INS", "NOTES", "QUESTIONS", "STEPS", "OnboardingAnswers", "StepOutcome",
    "advance", "apply_values", "completion_summary", "confirmation", "extract_goal", "first_missing_step",
    "goal_correction", "goal_from_its_verb", "is_vague", "later_goal", "map_category", "named_change",
    "non_answer_kind", "parse_best_time", "parse_category_answer",
    "parse_confidence", "parse_hours", "question_for", "reprompt", "time_correction",
]
