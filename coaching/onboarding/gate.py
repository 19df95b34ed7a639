"""The step machine: goal → category → weekly hours → best time → confidence. Each message is
validated for the current step (answers.py, values.py); only a genuine answer advances, a
correction changes an earlier answer, and after two unmatched answers the category and time of
day steps choose a safe default and say so. Pure functions: no database, no model."""

from __future__ import annotations

import re
from decimal import Decimal

from coaching.models import BestTime, GoalCategory, OnboardingStep
from coaching.onboarding.answers import (
    CORRECTION,
    after_change_of_mind,
    extract_goal,
    goal_correction,
    goal_swap,
    is_bare_question,
    is_vague,
    later_goal,
    named_change,
    non_answer_kind,
)
from coaching.onboarding.small_talk import is_greeting, strip_greeting
from coaching.onboarding.state import OnboardingAnswers, StepOutcome
from coaching.onboarding.texts import NOTES, PER_OCCASION
from coaching.onboarding.values import (
    CLOCK_LIKE,
    CONFIDENCE_WITH_SCALE,
    HOURS_WITH_UNIT,
    TIME_RULES,
    amounts_apart,
    confidence_numbers,
    has_keyword,
    hours_per_occasion,
    map_category,
    normalise,
    parse_best_time,
    parse_category_answer,
    parse_confidence,
    parse_hours,
    said_with_unit,
    sittings_a_week,
)
from coaching.turn.reading.vocabulary import without_replaced

STEPS = [OnboardingStep.GOAL, OnboardingStep.CATEGORY, OnboardingStep.WEEKLY_HOURS,
         OnboardingStep.BEST_TIME, OnboardingStep.CONFIDENCE, OnboardingStep.DONE]
FIELD_OF_STEP = {OnboardingStep.GOAL: "primary_goal", OnboardingStep.CATEGORY: "goal_category",
                 OnboardingStep.WEEKLY_HOURS: "weekly_hours", OnboardingStep.BEST_TIME: "best_time",
                 OnboardingStep.CONFIDENCE: "confidence"}


def _settled(text: str, read):
    """The value an answer settles on: read from the words after the learner's last change of mind
    ("maybe 4 hours? actually no, make it 3") when it is there, else from the whole answer."""
    revised = after_change_of_mind(text)
    value = read(revised) if revised else None
    return read(text) if value in (None, "") else value


def _revised(text: str, read) -> bool:
    """The answer changes its mind and says the value after it ("3 hours, no wait, 4")."""
    revised = after_change_of_mind(text)
    return bool(revised) and read(revised) not in (None, "")


def _with_unit(pattern, parse):
    def read(text: str):
        match = pattern.search(text)
        return parse(match.group(0)) if match else None

    return read


def _without(goal: str, text: str) -> str:
    """The message without the goal's words: a number inside the goal ("run a half marathon in
    under 2 hours") is part of the goal, not an answer to a later question."""
    at = text.lower().find(goal.lower())
    return text if at < 0 else f"{text[:at]} {text[at + len(goal):]}"


def _early_values(text: str, answers: OnboardingAnswers) -> dict:
    """Hours and confidence the learner gave with their unit ("3 hours a week", "7/10") before the
    question came; the hours read from the whole message, so a rate said around the amount counts
    ("every other day for half an hour" is 1.75 h, not half an hour). The time of day is NOT read
    early: "evenings are chaos" names a time that does NOT suit them."""
    out: dict = {}
    if answers.weekly_hours is None and not CLOCK_LIKE.search(text) and said_with_unit(text) and (
            hours := _settled(text, parse_hours)):
        out["weekly_hours"] = hours
    if answers.confidence is None and (
            confidence := _settled(text, _with_unit(CONFIDENCE_WITH_SCALE, parse_confidence))) is not None:
        out["confidence"] = confidence
    return out


# --- the gate -----------------------------------------------------------------------------------
def first_missing_step(answers: OnboardingAnswers) -> str:
    for step in STEPS[:-1]:
        value = getattr(answers, FIELD_OF_STEP[step])
        if value in (None, ""):
            return step
    return OnboardingStep.DONE


def _finish(answers: OnboardingAnswers, step: str, updates: dict, notes: list[str],
            corrected: list[str] | None = None) -> StepOutcome:
    merged = OnboardingAnswers(**{**answers.__dict__, **updates})
    nxt = first_missing_step(merged)
    updates["onboarding_step"] = nxt
    return StepOutcome(accepted=True, step=step, next_step=nxt, updates=updates, notes=notes,
                       corrected=corrected or [])


def _reject(step: str, kind: str, error: str = "") -> StepOutcome:
    return StepOutcome(accepted=False, step=step, next_step=step, error=error or kind, kind=kind)


def _correct_other_field(answers: OnboardingAnswers, text: str) -> dict:
    """After 'actually …' / 'sorry, …': which EARLIER answer the learner is changing. Only values
    with an explicit marker count ("5 hours", "7/10", "mornings"): a bare number is ambiguous."""
    body = text[CORRECTION.match(text).end():]
    done = STEPS.index(answers.step) if answers.step in STEPS else len(STEPS) - 1

    def answered(step: str) -> bool:
        return STEPS.index(step) < done

    candidates: list[tuple[str, object]] = []
    if answered(OnboardingStep.WEEKLY_HOURS) and (match := HOURS_WITH_UNIT.search(body)):
        candidates.append(("weekly_hours", parse_hours(match.group(0))))
    if answered(OnboardingStep.CONFIDENCE) and (match := CONFIDENCE_WITH_SCALE.search(body)):
        candidates.append(("confidence", parse_confidence(match.group(0))))
    if answered(OnboardingStep.BEST_TIME):
        norm = normalise(body)
        for value, keywords in TIME_RULES:
            if any(has_keyword(norm, k) for k in keywords):
                candidates.append(("best_time", value))
                break
    if answered(OnboardingStep.CATEGORY):
        candidates.append(("goal_category", parse_category_answer(body)))
    for name, value in candidates:
        if value not in (None, "") and value != getattr(answers, name):
            return {name: value}
    return {}


# A time of day named as bad or taken: "evenings are chaos" (never read as the best time early).
_NOT_A_GOOD_TIME = re.compile(r"(?i)\b(?:not|no|never|can't|cannot|don't|busy|chaos|chaotic|bad|worst|hard|tough|"
                              r"tired|hate|taken|full|impossible|difficult|crazy|hectic)\b")

# Steps after the goal: the profile field each fills, the rule that reads the answer, and (for the
# numbers) why an unreadable answer is rejected instead of moving towards the step's default.
_STEP_ANSWERS = {
    OnboardingStep.CATEGORY: ("goal_category", parse_category_answer, ""),
    OnboardingStep.WEEKLY_HOURS: ("weekly_hours", parse_hours, "hours not in 0.5–80"),
    OnboardingStep.BEST_TIME: ("best_time", parse_best_time, ""),
    OnboardingStep.CONFIDENCE: ("confidence", parse_confidence, "confidence not in 1–10"),
}


def advance(answers: OnboardingAnswers, text: str, *, rejected_in_row: int = 0) -> StepOutcome:
    """Validate one answer for the current step. Advances only on a genuine answer.

    `rejected_in_row`: how many answers in a row the gate has already rejected at this step (the
    engine counts them from the conversation's turns). The second unmatched category answer
    chooses "other" and the second unmatched time of day chooses "flexible"."""
    step = answers.step
    if step == OnboardingStep.DONE:
        return _reject(step, "done", "already complete")

    # A correction of the goal works at every step (and re-maps the category); so does a goal
    # stated with a goal verb at a later step ("I want to get better at playing guitar" at the
    # category question), and any real goal while the stored one says nothing.
    named = named_change(text) if step != OnboardingStep.GOAL else {}
    if step != OnboardingStep.GOAL and (goal := goal_correction(text) or goal_swap(answers.primary_goal, text)
                                        or named.get("primary_goal") or later_goal(answers, text)):
        updates: dict = {"primary_goal": goal}
        category = map_category(goal)
        if category or answers.goal_category:
            updates["goal_category"] = category or ""
        return _finish(answers, step, updates, [NOTES["corrected"].format(what=f"your goal is “{goal}”")],
                       corrected=list(updates))
    if named and FIELD_OF_STEP.get(step) not in named:
        # "wait can i change the hours to 4 instead of 3" at the best-time question: the value named
        # changes an earlier answer (or gives a later one early); this question is asked again.
        fix = named
    elif step != OnboardingStep.GOAL and CORRECTION.match(text):
        fix = _correct_other_field(answers, text)
    else:
        fix = {}
    if fix:
        name, value = next(iter(fix.items()))
        label = {"goal_category": "the area", "weekly_hours": "hours a week", "best_time": "best time",
                 "confidence": "confidence"}[name]
        shown = f"{value.normalize():f}" if isinstance(value, Decimal) else value
        return _finish(answers, step, dict(fix), [NOTES["corrected"].format(what=f"{label} → {shown}")],
                       corrected=[name])

    if step == OnboardingStep.GOAL:
        # The goal is read first: "what can you do? I want to learn guitar" is a goal.
        goal, why = extract_goal(text)
        if goal is None:
            if why == "no_goal" and strip_greeting(text) != text.strip():
                why = "greeting"
            kind, _, area = why.partition(":")  # "area_only:music": the area is said back
            return _reject(step, kind, area)
        updates = {"primary_goal": goal}
        category = map_category(goal)
        if category:
            updates["goal_category"] = category
        updates.update(_early_values(_without(goal, text), answers))
        return _finish(answers, step, updates, [])

    if is_greeting(text) or is_vague(text):
        return _retry_default(answers, step, "greeting" if is_greeting(text) else "filler", rejected_in_row)
    text = without_replaced(text)  # "4 instead of 3": the 3 is the value replaced, not an answer
    updates = {}
    if step in _STEP_ANSWERS:
        field, parse, out_of_range = _STEP_ANSWERS[step]
        value = _settled(text, parse)
        if value in (None, "") and step == OnboardingStep.WEEKLY_HOURS and (times := sittings_a_week(text)):
            # "3 times a week": how often, not how long; the next answer's length makes the week.
            return _reject(step, "sittings", f"{times:g} times a week — about how long each time?")
        if value in (None, "") and step == OnboardingStep.WEEKLY_HOURS and (each := hours_per_occasion(text)):
            amount, occasion, five = each  # "30 minutes" on "evenings": no weekly total to store
            said = PER_OCCASION.format(amount=amount, each=occasion, five=five.normalize())
            return _reject(step, "per_occasion", said[:1].upper() + said[1:])
        if (value in (None, "") and step == OnboardingStep.CONFIDENCE
                and len(scores := sorted(n for n in confidence_numbers(text) if 1 <= n <= 10)) > 1):
            # "like a 6? maybe 5 on bad days": two scores, both said; the question names them.
            said = " and ".join([", ".join(map(str, scores[:-1])), str(scores[-1])])
            return _reject(step, "two_scores", f"I read {said}: which of them fits best today, from 1 to 10?")
        if (step == OnboardingStep.WEEKLY_HOURS and value not in (None, "") and not _revised(text, parse)
                and len(said := amounts_apart(text)) > 1):
            # "i'd say 5 but realistically 3": two amounts and no word of which is meant; the
            # question names both instead of storing the first.
            both = " and ".join([", ".join(said[:-1]), said[-1]])
            return _reject(step, "two_amounts", f"I read {both}: which is closer to a usual week, in hours?")
        if value in (None, "") and (early := {k: v for k, v in _early_values(text, answers).items()
                                               if k != field}):
            # "3 hours a week" at the area question answers a later one: kept, this one asked again.
            return _finish(answers, step, early, [])
        if (value in (None, "") and step in (OnboardingStep.CATEGORY, OnboardingStep.WEEKLY_HOURS)
                and not answers.best_time and len(normalise(text).split()) <= 5
                and not _NOT_A_GOOD_TIME.search(text) and (when := parse_best_time(text))
                and when != BestTime.FLEXIBLE):
            # "mornings before work" at the hours question, "de manhã cedo" at the area question:
            # a time of day and nothing else answers a later question; kept, this one asked again.
            # "Flexible" is no time of day named: "depends on the week" at the hours question
            # says how much varies, not when.
            return _finish(answers, step, {"best_time": when}, [])
        if value in (None, ""):
            if out_of_range:  # a number outside its range is re-asked, never defaulted
                return _reject(step, _failed_kind(text), out_of_range)
            return _retry_default(answers, step, _failed_kind(text), rejected_in_row)
        updates[field] = value
    return _finish(answers, step, updates, [])


def _failed_kind(text: str) -> str:
    """Why an answer the step's parser could not read was not an answer."""
    return non_answer_kind(text) or ("question" if is_bare_question(text) else "unmatched")


def _retry_default(answers: OnboardingAnswers, step: str, kind: str, rejected_in_row: int) -> StepOutcome:
    """Reject, unless this is the second unmatched answer at a step with a safe default: then the
    gate chooses it, says so, and moves on (a learner is never trapped on the category question)."""
    if rejected_in_row >= 1 and step == OnboardingStep.CATEGORY:
        goal = answers.primary_goal or "your goal"
        return _finish(answers, step, {"goal_category": GoalCategory.OTHER},
                       [NOTES["category_other"].format(goal=goal)])
    if rejected_in_row >= 1 and step == OnboardingStep.BEST_TIME:
        return _finish(answers, step, {"best_time": BestTime.FLEXIBLE}, [NOTES["time_flexible"]])
    return _reject(step, kind)


_FIELD_OF_SLOT = {"goal": "primary_goal", "category": "goal_category", "weekly_hours": "weekly_hours",
                  "time_of_day": "best_time", "confidence": "confidence"}


def apply_values(answers: OnboardingAnswers, values: dict, *, corrected: bool = False) -> StepOutcome:
    """The gate's outcome for values a reading settled (`{slot: value}`, each already pointing at the
    learner's words and parsed by code): in range, they are saved as an answer would be; none
    usable, the step is asked again."""
    step = answers.step
    updates: dict = {}
    for slot, field_name in _FIELD_OF_SLOT.items():
        if slot not in values or values[slot] in (None, ""):
            continue
        value = values[slot]
        if field_name == "weekly_hours":
            hours = Decimal(str(round(float(value), 2))).quantize(Decimal("0.01"))
            if not Decimal("0.5") <= hours <= Decimal("80"):
                continue
            value = hours
        elif field_name == "confidence" and not 1 <= int(value) <= 10:
            continue
        updates[field_name] = value
    if "best_time" not in updates and values.get("time") and (when := parse_best_time(str(values["time"]))):
        updates["best_time"] = when  # a clock time said: its time of day
    category = map_category(updates["primary_goal"]) if "primary_goal" in updates else None
    if category and "goal_category" not in updates:
        updates["goal_category"] = category
    if not updates:
        return _reject(step, "unmatched")
    if corrected:
        said = ", ".join(f"{k.replace('_', ' ')} → {v}" for k, v in updates.items())
        return _finish(answers, step, updates, [NOTES["corrected"].format(what=said)], corrected=list(updates))
    return _finish(answers, step, updates, [])
