"""The onboarding gate: a deterministic state machine (goal → category → weekly hours → best time →
confidence). Every answer is validated HERE, in code. The model never decides whether a step is
done and never picks the category; it may only phrase an acknowledgement (see engine.py).
Pure functions: no database, no model — unit-tested exhaustively."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from coaching.models import BestTime, GoalCategory, OnboardingStep

STEPS = [OnboardingStep.GOAL, OnboardingStep.CATEGORY, OnboardingStep.WEEKLY_HOURS,
         OnboardingStep.BEST_TIME, OnboardingStep.CONFIDENCE, OnboardingStep.DONE]

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

CLARIFY = {
    OnboardingStep.GOAL: (
        "I need a goal in your own words before we go on — for example “learn to swim” or “pass my French B1 exam”."
    ),
    OnboardingStep.CATEGORY: (
        "Please pick one: language, programming, career, school/exams, music, art, sport/fitness, or other."
    ),
    OnboardingStep.WEEKLY_HOURS: (
        "I need a number of hours per week between 0.5 and 80 — for example “3” or “2.5 hours”."
    ),
    OnboardingStep.BEST_TIME: "Please pick one: morning, midday, afternoon, evening, night — or “flexible”.",
    OnboardingStep.CONFIDENCE: "Please give a whole number from 1 (not at all) to 10 (completely).",
}

# Non-answers: these never advance the gate, whatever the step.
_VAGUE = {
    "", "idk", "i dont know", "i don't know", "dunno", "not sure", "no idea", "skip", "pass", "next",
    "maybe", "whatever", "anything", "nothing", "n/a", "na", "none", "?", "hmm", "hm", "ok", "okay",
    "yes", "no", "sure", "later", "you decide", "you choose", "dont care", "don't care", "no clue",
    "something", "stuff", "idc", "meh", "k", "...", "-", "continue", "go on", "lol",
}

_WORD_NUMBERS = {
    "zero": 0, "half": 0.5, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
}

# Keyword rules for the fixed category list. Order matters: first match wins. Word-boundary
# prefixes, so "swimming" matches "swim" but "careful" does not match "career".
_CATEGORY_RULES: list[tuple[str, tuple[str, ...]]] = [
    (GoalCategory.LANGUAGE, ("language", "spanish", "french", "german", "italian", "portuguese", "japanese",
                             "chinese", "mandarin", "korean", "arabic", "russian", "english", "dutch", "greek",
                             "vocabulary", "grammar", "fluent", "fluency", "duolingo", "hindi", "swedish")),
    (GoalCategory.PROGRAMMING, ("programming", "program", "code", "coding", "python", "javascript", "java",
                                "rust", "golang", "sql", "software", "web dev", "developer", "data science",
                                "machine learning", "tech", "computer", "html", "css", "django", "react", "app")),
    (GoalCategory.ACADEMIC, ("exam", "school", "university", "college", "degree", "thesis", "math", "maths",
                             "physics", "chemistry", "biology", "history", "study for", "course", "gcse",
                             "sat", "test prep", "homework", "calculus", "statistics")),
    (GoalCategory.MUSIC, ("music", "guitar", "piano", "violin", "drum", "sing", "singing", "ukulele", "bass",
                          "cello", "saxophone", "flute", "song", "compose")),
    (GoalCategory.ART, ("art", "draw", "drawing", "paint", "painting", "sketch", "photograph", "photography",
                        "design", "write", "writing", "novel", "poetry", "pottery", "knit", "craft")),
    (GoalCategory.SPORT, ("swim", "swimming", "run", "running", "marathon", "gym", "fitness", "yoga", "cycling",
                          "bike", "tennis", "football", "soccer", "basketball", "climb", "climbing", "sport",
                          "workout", "exercise", "strength", "lift", "weight", "martial", "boxing", "dance",
                          "dancing", "ski", "skiing", "surf", "hike", "hiking", "5k", "10k")),
    (GoalCategory.CAREER, ("career", "job", "promotion", "interview", "resume", "cv", "leadership", "management",
                           "manager", "public speaking", "negotiation", "professional", "certification",
                           "business", "marketing", "sales")),
]
_CATEGORY_NAMES = {
    "language": GoalCategory.LANGUAGE, "languages": GoalCategory.LANGUAGE,
    "programming": GoalCategory.PROGRAMMING, "tech": GoalCategory.PROGRAMMING, "coding": GoalCategory.PROGRAMMING,
    "career": GoalCategory.CAREER, "professional": GoalCategory.CAREER, "work": GoalCategory.CAREER,
    "school": GoalCategory.ACADEMIC, "exams": GoalCategory.ACADEMIC, "exam": GoalCategory.ACADEMIC,
    "school/exams": GoalCategory.ACADEMIC, "academic": GoalCategory.ACADEMIC, "study": GoalCategory.ACADEMIC,
    "music": GoalCategory.MUSIC, "art": GoalCategory.ART, "creative": GoalCategory.ART,
    "sport": GoalCategory.SPORT, "fitness": GoalCategory.SPORT, "sport/fitness": GoalCategory.SPORT,
    "sports": GoalCategory.SPORT, "other": GoalCategory.OTHER, "something else": GoalCategory.OTHER,
}

_TIME_RULES: list[tuple[str, tuple[str, ...]]] = [
    (BestTime.FLEXIBLE, ("flexible", "any time", "anytime", "whenever", "depends")),
    (BestTime.MORNING, ("morning", "mornings", "before work", "sunrise", "breakfast")),
    (BestTime.MIDDAY, ("midday", "noon", "lunch", "lunchtime")),
    (BestTime.AFTERNOON, ("afternoon", "afternoons", "after school", "after lunch")),
    (BestTime.EVENING, ("evening", "evenings", "after work", "after dinner", "tonight")),
    (BestTime.NIGHT, ("night", "nights", "late at night", "midnight", "before bed", "bedtime")),
]


@dataclass
class OnboardingAnswers:
    """The profile fields the gate collects (mirrors LearnerProfile; kept DB-free for tests)."""

    step: str = OnboardingStep.GOAL
    primary_goal: str = ""
    goal_category: str = ""
    weekly_hours: Decimal | None = None
    best_time: str = ""
    confidence: int | None = None


@dataclass
class StepOutcome:
    accepted: bool
    step: str  # the step that was answered (or attempted)
    next_step: str
    updates: dict = field(default_factory=dict)  # profile fields to save
    error: str = ""  # why it did not advance (shown to the learner via CLARIFY)


def normalise(text: str) -> str:
    text = text.strip().lower()
    text = re.sub(r"[!.,;:]+$", "", text)
    return re.sub(r"\s+", " ", text).strip()


def is_vague(text: str) -> bool:
    norm = normalise(text)
    if norm in _VAGUE:
        return True
    # Only punctuation/emoji or a single character is not an answer either.
    return len(re.sub(r"[^a-z0-9]", "", norm)) < 2 and not norm.isdigit()


def _has_keyword(text: str, keyword: str) -> bool:
    return re.search(r"(?<![a-z0-9])" + re.escape(keyword) + r"(?![a-z])", text) is not None


def map_category(text: str) -> str | None:
    """Keyword rules over the fixed list. None when nothing matched (caller asks the learner)."""
    norm = normalise(text)
    if norm in _CATEGORY_NAMES:
        return _CATEGORY_NAMES[norm]
    for category, keywords in _CATEGORY_RULES:
        if any(_has_keyword(norm, k) for k in keywords):
            return category
    return None


def parse_category_answer(text: str) -> str | None:
    """An answer to the explicit category question: a category name, a goal keyword, or "other"."""
    norm = normalise(text)
    if norm in _CATEGORY_NAMES:
        return _CATEGORY_NAMES[norm]
    for word in re.findall(r"[a-z/]+", norm):
        if word in _CATEGORY_NAMES:
            return _CATEGORY_NAMES[word]
    return map_category(norm)


def parse_hours(text: str) -> Decimal | None:
    """'3', '3 hours', '2.5h', '2,5', 'three', 'about 4 hrs/week', '90 minutes'. None if not a number
    or outside 0.5–80. Ranges ('3-4') take the lower bound: plan for what is sure."""
    norm = normalise(text).replace(",", ".")
    minutes = re.search(r"(\d+(?:\.\d+)?)\s*(?:min|mins|minutes)\b", norm)
    value: float | None = None
    if minutes:
        value = float(minutes.group(1)) / 60.0
    else:
        match = re.search(r"\d+(?:\.\d+)?", norm)
        if match:
            value = float(match.group(0))
        else:
            words = re.findall(r"[a-z]+", norm)
            for i, word in enumerate(words):
                if word in _WORD_NUMBERS:
                    value = float(_WORD_NUMBERS[word])
                    # "two and a half"
                    if words[i + 1:i + 4] == ["and", "a", "half"]:
                        value += 0.5
                    break
    if value is None or not (0.5 <= value <= 80):
        return None
    return Decimal(str(round(value * 2) / 2)).quantize(Decimal("0.1"))


def parse_best_time(text: str) -> str | None:
    norm = normalise(text)
    for value, keywords in _TIME_RULES:
        if any(_has_keyword(norm, k) for k in keywords):
            return value
    match = re.search(r"\b(\d{1,2})(?::\d{2})?\s*(am|pm)?\b", norm)
    if match:
        hour = int(match.group(1)) % 24
        if match.group(2) == "pm" and hour < 12:
            hour += 12
        if 5 <= hour < 11:
            return BestTime.MORNING
        if 11 <= hour < 14:
            return BestTime.MIDDAY
        if 14 <= hour < 18:
            return BestTime.AFTERNOON
        if 18 <= hour < 22:
            return BestTime.EVENING
        return BestTime.NIGHT
    return None


def parse_confidence(text: str) -> int | None:
    norm = normalise(text)
    match = re.search(r"\b(\d{1,2})(?:\s*(?:/|out of)\s*10)?\b", norm)
    value: int | None = None
    if match:
        value = int(match.group(1))
    else:
        for word in re.findall(r"[a-z]+", norm):
            if word in _WORD_NUMBERS and float(_WORD_NUMBERS[word]).is_integer():
                value = int(_WORD_NUMBERS[word])
                break
    if value is None or not 1 <= value <= 10:
        return None
    return value


def next_step_after(step: str, answers: OnboardingAnswers) -> str:
    idx = STEPS.index(step)
    nxt = STEPS[idx + 1]
    # The category question is skipped when the goal already mapped to a category by keyword.
    if nxt == OnboardingStep.CATEGORY and answers.goal_category:
        nxt = STEPS[idx + 2]
    return nxt


def advance(answers: OnboardingAnswers, text: str) -> StepOutcome:
    """Validate one answer for the current step. Advances only on a valid answer."""
    step = answers.step
    if step == OnboardingStep.DONE:
        return StepOutcome(accepted=False, step=step, next_step=step, error="already complete")
    if is_vague(text):
        return StepOutcome(accepted=False, step=step, next_step=step, error="vague")
    updates: dict = {}
    if step == OnboardingStep.GOAL:
        goal = re.sub(r"\s+", " ", text.strip())[:300]
        if len(re.findall(r"[A-Za-z\u00C0-\u024F]{2,}", goal)) < 1:
            return StepOutcome(accepted=False, step=step, next_step=step, error="no goal words")
        updates["primary_goal"] = goal
        category = map_category(goal)
        if category:
            updates["goal_category"] = category
    elif step == OnboardingStep.CATEGORY:
        category = parse_category_answer(text)
        if not category:
            return StepOutcome(accepted=False, step=step, next_step=step, error="unknown category")
        updates["goal_category"] = category
    elif step == OnboardingStep.WEEKLY_HOURS:
        hours = parse_hours(text)
        if hours is None:
            return StepOutcome(accepted=False, step=step, next_step=step, error="hours not in 0.5–80")
        updates["weekly_hours"] = hours
    elif step == OnboardingStep.BEST_TIME:
        best = parse_best_time(text)
        if not best:
            return StepOutcome(accepted=False, step=step, next_step=step, error="unknown time of day")
        updates["best_time"] = best
    elif step == OnboardingStep.CONFIDENCE:
        confidence = parse_confidence(text)
        if confidence is None:
            return StepOutcome(accepted=False, step=step, next_step=step, error="confidence not in 1–10")
        updates["confidence"] = confidence
    merged = OnboardingAnswers(**{**answers.__dict__, **updates})
    nxt = next_step_after(step, merged)
    updates["onboarding_step"] = nxt
    return StepOutcome(accepted=True, step=step, next_step=nxt, updates=updates)


def completion_summary(answers: OnboardingAnswers) -> str:
    label = dict(GoalCategory.choices).get(answers.goal_category, answers.goal_category)
    hours = f"{answers.weekly_hours.normalize():f}" if answers.weekly_hours is not None else "?"
    return (
        f"You're all set: “{answers.primary_goal}” ({label.lower()}), {hours} h a week, best in the "
        f"{answers.best_time}, confidence {answers.confidence}/10. Say “let's plan” whenever you want a weekly plan."
    )
