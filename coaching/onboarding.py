"""The onboarding gate: a deterministic state machine (goal → category → weekly hours → best time →
confidence). Every answer is validated HERE, in code. The model never decides whether a step is
done and never picks the category; it may only phrase an acknowledgement (see engine.py).
Pure functions: no database, no model — unit-tested exhaustively.

What counts as an answer (issue 14): a greeting, filler, a bare question, a refusal or an
off-topic line is never an answer, at any step. A goal stated before it was asked ("hi! I want to
learn Spanish") is taken; so are hours or a confidence stated with their unit alongside it. The
category is read by rules from the answer, the goal itself and everyday words ("for work",
"it's for uni"); after two unmatched answers at the category step the gate chooses "other" and
says so (at the time step: "flexible"). Re-prompts alternate between two phrasings, so the same
templated text never comes twice in a row. "Actually, my goal is …" corrects an earlier answer at
any step."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from coaching.models import BestTime, GoalCategory, OnboardingStep
from coaching.reply_checks import is_greeting, is_small_talk, strip_greeting

STEPS = [OnboardingStep.GOAL, OnboardingStep.CATEGORY, OnboardingStep.WEEKLY_HOURS,
         OnboardingStep.BEST_TIME, OnboardingStep.CONFIDENCE, OnboardingStep.DONE]
FIELD_OF_STEP = {OnboardingStep.GOAL: "primary_goal", OnboardingStep.CATEGORY: "goal_category",
                 OnboardingStep.WEEKLY_HOURS: "weekly_hours", OnboardingStep.BEST_TIME: "best_time",
                 OnboardingStep.CONFIDENCE: "confidence"}

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
}
NOTES = {
    "category_other": ("I'll file “{goal}” under “other” for now — say “actually, it's music” (or another area) "
                       "any time to change it."),
    "time_flexible": "I'll note your time as flexible for now — tell me a time of day whenever you like.",
    "corrected": "Updated: {what}.",
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



# Everyday words for the category question ("it's for work", "for uni", "just a hobby").
_EVERYDAY_CATEGORY: list[tuple[str, tuple[str, ...]]] = [
    (GoalCategory.CAREER, ("for work", "for my work", "work thing", "work-related", "work related", "my job",
                           "for my job", "office", "my boss", "my team", "get hired", "new job")),
    (GoalCategory.ACADEMIC, ("uni", "for uni", "for school", "for class", "studies", "studying", "student",
                             "grades", "a test", "an exam", "exams", "revision", "revise", "coursework")),
    (GoalCategory.SPORT, ("health", "healthy", "get fit", "staying fit", "stay fit", "keep fit", "active",
                          "body", "physical", "outdoors", "movement", "steps")),
    (GoalCategory.ART, ("creative", "crafts", "crafty", "making things", "handmade", "artsy", "arty")),
    (GoalCategory.MUSIC, ("instrument", "musical", "band", "choir")),
    (GoalCategory.LANGUAGE, ("speak", "speaking", "words", "travel", "abroad")),
    (GoalCategory.OTHER, ("hobby", "hobbies", "just for fun", "for fun", "personal", "for me", "for myself",
                          "life", "home", "household", "none of those", "none of them", "neither", "something else",
                          "not sure which", "cooking", "cook", "garden", "gardening", "chess", "reading")),
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
    error: str = ""  # why it did not advance (kind of non-answer or parse failure)
    kind: str = ""  # greeting | filler | question | refusal | off_topic | vague_goal | unmatched
    notes: list[str] = field(default_factory=list)  # code-rendered sentences said to the learner
    corrected: list[str] = field(default_factory=list)  # earlier fields this answer changed


def normalise(text: str) -> str:
    text = text.strip().lower().replace("’", "'")
    text = re.sub(r"[!.,;:]+$", "", text)
    return re.sub(r"\s+", " ", text).strip()


def is_vague(text: str) -> bool:
    """Filler, greetings and pleasantries; only punctuation/emoji or one character is not an answer."""
    if is_small_talk(text):
        return True
    norm = normalise(text)
    return len(re.sub(r"[^a-z0-9]", "", norm)) < 2 and not norm.isdigit()


# --- what kind of non-answer --------------------------------------------------------------------
_REFUSAL = re.compile(
    r"(?i)\b(?:rather not|prefer not|i don'?t want to (?:say|answer|tell|share|do this)|not telling|"
    r"none of your business|no comment|why do you (?:need|want) to know|not answering|stop asking|"
    r"don'?t want to answer|i won'?t (?:say|answer|tell))")
_OFF_TOPIC = re.compile(
    r"(?i)\b(?:weather|a joke|tell me a (?:joke|story)|the news|who are you|what are you|are you (?:a |an )?"
    r"(?:bot|robot|human|ai|real|person)|your name|what is this|what's this|how does (?:this|it) work|"
    r"how do(?:es)? you work|what can you do|who made you|football score|stock price)\b")
_ABOUT = re.compile(r"(?i)\bhow (?:does )?(?:this|it) works?\b|\bwhat (?:is|does) this\b|\bwhat do you do\b|"
                    r"\bwhat can you do\b|\bwhat are you\b|\bwho are you\b")
_QUESTION_START = re.compile(
    r"(?i)^\s*(?:what|why|how|who|when|where|which|can|could|would|will|do|does|did|is|are|should|may)\b")


def non_answer_kind(text: str) -> str | None:
    """Why a message is not an answer to any onboarding question, or None if it might be one."""
    if is_greeting(text):
        return "greeting"
    if is_vague(text):
        return "filler"
    if _REFUSAL.search(text):
        return "refusal"
    if _ABOUT.search(text):
        return "about"
    if _OFF_TOPIC.search(text):
        return "off_topic"
    return None


def _is_bare_question(text: str) -> bool:
    stripped = text.strip()
    return stripped.endswith("?") or bool(_QUESTION_START.match(stripped))


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
    """An answer to the category question: a category name, a goal keyword, an everyday word
    ("for work", "it's a hobby"), or "other"."""
    norm = normalise(text)
    if norm in _CATEGORY_NAMES:
        return _CATEGORY_NAMES[norm]
    for word in re.findall(r"[a-z/]+", norm):
        if word in _CATEGORY_NAMES and word not in ("work", "study"):
            return _CATEGORY_NAMES[word]
    mapped = map_category(norm)
    if mapped:
        return mapped
    for category, keywords in _EVERYDAY_CATEGORY:
        if any(_has_keyword(norm, k) for k in keywords):
            return category
    for word in ("work", "study"):
        if _has_keyword(norm, word):
            return _CATEGORY_NAMES[word]
    return None


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
    # A clock time needs its marker ("7pm", "6:30", "8 o'clock"): a bare "5" is more likely a
    # confidence or an hour count given at the wrong step than a time of day.
    match = re.search(r"\b(\d{1,2})(?::\d{2}|\s*(am|pm|o'?clock)\b)", norm)
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



# --- goals --------------------------------------------------------------------------------------
# "I want to …", "my goal is …", "help me …": the words after the cue are the goal.
_GOAL_INTENT = re.compile(
    r"(?i)\b(?:my (?:main |real |actual |new )?goal (?:is|would be|'s)(?: to)?|goal:|"
    r"i(?:'d| would) (?:really )?(?:like|love) to|i (?:really )?(?:want|wanna|need|hope|plan|mean|meant) to|"
    r"i (?:really )?want|i(?:'m| am) (?:hoping|trying|planning|aiming|looking) to|i(?:'m| am) working on|"
    r"(?:can|could) you help me(?: to)?|help me(?: to)?|i(?:'d| would) rather|change (?:my|the) goal to|"
    r"set my goal to|it'?s (?:more|really) about|i meant)\s+(.+)")
# A goal without an intent phrase still starts with (or contains) a learning verb.
_GOAL_VERB = re.compile(
    r"(?i)\b(?:learn|learning|get better at|improve|practi[cs]e|study|pass|prepare for|become|start|master|"
    r"train for|be able to|finish|build|read|write|run|swim|play|speak|draw|paint|cook|lose|get into|"
    r"pick up|brush up)\b")
# Words that say nothing about WHAT the goal is: "get better at stuff" is not a goal yet.
_GENERIC = frozenset({
    "get", "got", "better", "at", "be", "more", "good", "do", "doing", "things", "stuff", "something", "anything",
    "everything", "improve", "improving", "learn", "learning", "some", "a", "an", "the", "to", "in", "on", "my",
    "myself", "me", "life", "just", "really", "generally", "general", "overall", "whatever", "bit", "lot", "lots",
    "new", "start", "finally", "properly", "guess", "maybe", "idk", "and", "or", "of", "with", "for", "it",
})
_LEAD_FILLER = re.compile(r"(?i)^\s*(?:(?:i guess|i think|well|so|um+|uh+|hmm+|idk|maybe|probably|honestly|ok(?:ay)?|"
                          r"yeah|yes|like|basically|actually|i suppose)\b[\s,.!-]*)+")
_CORRECTION = re.compile(r"(?i)^\s*(?:(?:actually|wait|sorry|oops|correction|no|nope|hmm|scratch that|"
                         r"on second thought|let me change|change of plan)\b[\s,:!.-]*)+")


def _clean_goal(phrase: str) -> str:
    phrase = _LEAD_FILLER.sub("", phrase.strip())
    phrase = re.split(r"(?<=[a-z0-9)])[.!?;]\s|[.!?;]+$|\s+(?:but|because|since|though)\s", phrase, maxsplit=1)[0]
    return re.sub(r"\s+", " ", phrase).strip(" ,.-—–!?")[:300]


def _substantive(goal: str) -> bool:
    content = [w for w in re.findall(r"[a-z0-9\u00e0-\u024f]+", goal.lower()) if w not in _GENERIC]
    return any(len(w) >= 3 or w.isdigit() for w in content)


def extract_goal(text: str) -> tuple[str | None, str]:
    """(goal, "") or (None, why not). Reads a goal from a message that may open with a greeting or
    small talk. A message without a learning verb or intent phrase is still a goal when it is a
    short phrase naming something ("pottery", "public speaking") or maps to a category."""
    body = strip_greeting(text)
    kind = non_answer_kind(body) if body else "greeting"
    if kind in ("greeting", "filler", "refusal"):
        return None, kind
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", body) if s.strip()]
    vague = False
    judged: set[str] = set()
    for sentence in sentences:
        match = _GOAL_INTENT.search(sentence)
        if match:
            judged.add(sentence)
            goal = _clean_goal(match.group(1))
            if goal and _substantive(goal) and not non_answer_kind(goal):
                return goal, ""
            vague = True
    for sentence in sentences:
        if sentence in judged or non_answer_kind(sentence) or _OFF_TOPIC.search(sentence):
            continue
        cleaned = _clean_goal(sentence)
        if not cleaned or not _substantive(cleaned):
            continue
        if _GOAL_VERB.search(cleaned) or map_category(cleaned):
            if _is_bare_question(sentence) and not map_category(cleaned):
                continue
            return cleaned, ""
    if len(sentences) == 1 and not vague and kind is None:
        cleaned = _clean_goal(body)
        if (cleaned and len(cleaned.split()) <= 6 and _substantive(cleaned) and not _is_bare_question(body)
                and not re.match(r"(?i)^(?:i|i'm|im|i am|it|it's|this|that|we|you)\b", cleaned)):
            return cleaned, ""
    if kind in ("off_topic", "about"):
        return None, kind
    if vague:
        return None, "vague_goal"
    if any(_is_bare_question(s) for s in sentences):
        return None, "question"
    return None, "no_goal"


def goal_correction(text: str) -> str | None:
    """'actually, my goal is to learn German', 'no — I want to learn the piano', 'change my goal to …'."""
    corrected = _CORRECTION.match(text)
    body = text[corrected.end():] if corrected else text
    match = re.search(r"(?i)\b(?:my (?:main |real |actual |new )?goal (?:is|would be|'s)(?: to)?|"
                      r"change (?:my|the) goal to|set my goal to|i(?:'d| would) rather|i meant)\s+(.+)", body)
    if match is None and corrected:
        match = re.search(r"(?i)^(?:i (?:really )?(?:want|wanna) to|i(?:'d| would) like to)\s+(.+)", body.strip())
    if match is None:
        return None
    goal = _clean_goal(match.group(1))
    if not goal or not _substantive(goal) or non_answer_kind(goal):
        return None
    # "sorry, I meant mornings" / "I meant 5 hours" corrects another answer, not the goal.
    norm = normalise(goal)
    if (norm in _CATEGORY_NAMES or _HOURS_WITH_UNIT.search(goal) or _CONFIDENCE_WITH_SCALE.search(goal)
            or (len(norm.split()) <= 3 and any(_has_keyword(norm, k) for _, ks in _TIME_RULES for k in ks))):
        return None
    return goal


_PRONOUN_REF = re.compile(r"(?i)\b(?:it|this|that|them|these|those)\b")


def _reads_as_step_answer(step: str, text: str) -> bool:
    """The current step's own parser reads the message: "I want to do 3 hours" answers the hours."""
    if step == OnboardingStep.WEEKLY_HOURS:
        return parse_hours(text) is not None
    if step == OnboardingStep.BEST_TIME:
        return parse_best_time(text) is not None
    if step == OnboardingStep.CONFIDENCE:
        return parse_confidence(text) is not None
    return False


def later_goal(answers: OnboardingAnswers, text: str) -> str | None:
    """A goal stated after the goal step, without "actually": taken when the stored goal is not
    substantive (small talk or uncertainty stored before those were rejected), or when the message
    states a goal with an intent phrase and a goal verb. Not when the step's own parser reads the
    message, and not "I want to learn it for work" (a pronoun points back at the stored goal)."""
    if _reads_as_step_answer(answers.step, text):
        return None
    stored = answers.primary_goal
    stored_empty = not stored or is_small_talk(stored) or not _substantive(stored)
    if stored_empty:
        goal, _ = extract_goal(text)
        # Only a goal that names a skill ("play guitar", "pottery"), not "12" at the confidence step.
        named = goal and (_GOAL_VERB.search(goal) or map_category(goal))
        return goal if named and goal_correction(f"actually my goal is {goal}") else None
    match = next((m for s in re.split(r"(?<=[.!?])\s+|\n+", strip_greeting(text))
                  if (m := _GOAL_INTENT.search(s))), None)
    if match is None:
        return None
    goal = _clean_goal(match.group(1))
    if (not goal or not _GOAL_VERB.search(goal) or not _substantive(goal) or non_answer_kind(goal)
            or _PRONOUN_REF.search(goal) or goal_correction(f"actually my goal is {goal}") is None):
        return None
    stored_words = set(re.findall(r"[a-z0-9]+", stored.lower()))
    new_words = {w for w in re.findall(r"[a-z0-9]+", goal.lower()) if w not in _GENERIC}
    if new_words <= stored_words:
        return None  # the same goal said again
    return goal


# --- values stated before they were asked -------------------------------------------------------
_HOURS_WITH_UNIT = re.compile(
    r"(?i)\b(\d+(?:[.,]\d+)?|half|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty)"
    r"(?:\s*(?:-|to)\s*\d+(?:[.,]\d+)?)?\s*(?:hours?|hrs?|h)\b(?:\s*(?:a|per|each|/)\s*week)?")
_CONFIDENCE_WITH_SCALE = re.compile(r"(?i)\b(\d{1,2})\s*(?:/|out of)\s*10\b")


def _early_values(text: str, answers: OnboardingAnswers) -> dict:
    """Hours and confidence the learner gave with their unit ("3 hours a week", "7/10") before the
    question came. The time of day is NOT read early: "evenings are chaos" names a time that does
    NOT suit them."""
    out: dict = {}
    if answers.weekly_hours is None and (match := _HOURS_WITH_UNIT.search(text)):
        hours = parse_hours(match.group(0))
        if hours is not None:
            out["weekly_hours"] = hours
    if answers.confidence is None and (match := _CONFIDENCE_WITH_SCALE.search(text)):
        confidence = parse_confidence(match.group(0))
        if confidence is not None:
            out["confidence"] = confidence
    return out


# --- the gate -----------------------------------------------------------------------------------
def first_missing_step(answers: OnboardingAnswers) -> str:
    for step in STEPS[:-1]:
        value = getattr(answers, FIELD_OF_STEP[step])
        if value in (None, ""):
            return step
    return OnboardingStep.DONE


def next_step_after(step: str, answers: OnboardingAnswers) -> str:
    """The first step still missing a value (the category is skipped when the goal mapped to one)."""
    return first_missing_step(answers)


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
    body = text[_CORRECTION.match(text).end():]
    done = STEPS.index(answers.step) if answers.step in STEPS else len(STEPS) - 1

    def answered(step: str) -> bool:
        return STEPS.index(step) < done

    candidates: list[tuple[str, object]] = []
    if answered(OnboardingStep.WEEKLY_HOURS) and (match := _HOURS_WITH_UNIT.search(body)):
        candidates.append(("weekly_hours", parse_hours(match.group(0))))
    if answered(OnboardingStep.CONFIDENCE) and (match := _CONFIDENCE_WITH_SCALE.search(body)):
        candidates.append(("confidence", parse_confidence(match.group(0))))
    if answered(OnboardingStep.BEST_TIME):
        norm = normalise(body)
        for value, keywords in _TIME_RULES:
            if any(_has_keyword(norm, k) for k in keywords):
                candidates.append(("best_time", value))
                break
    if answered(OnboardingStep.CATEGORY):
        candidates.append(("goal_category", parse_category_answer(body)))
    for name, value in candidates:
        if value not in (None, "") and value != getattr(answers, name):
            return {name: value}
    return {}


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
    if step != OnboardingStep.GOAL and (goal := goal_correction(text) or later_goal(answers, text)):
        updates: dict = {"primary_goal": goal}
        category = map_category(goal)
        if category or answers.goal_category:
            updates["goal_category"] = category or ""
        return _finish(answers, step, updates, [NOTES["corrected"].format(what=f"your goal is “{goal}”")],
                       corrected=list(updates))
    if step != OnboardingStep.GOAL and _CORRECTION.match(text) and (fix := _correct_other_field(answers, text)):
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
            return _reject(step, why)
        updates = {"primary_goal": goal}
        category = map_category(goal)
        if category:
            updates["goal_category"] = category
        updates.update(_early_values(text, answers))
        return _finish(answers, step, updates, [])

    if is_greeting(text) or is_vague(text):
        return _retry_default(answers, step, "greeting" if is_greeting(text) else "filler", rejected_in_row)
    updates = {}
    if step == OnboardingStep.CATEGORY:
        category = parse_category_answer(text)
        if not category:
            return _retry_default(answers, step, _failed_kind(text), rejected_in_row)
        updates["goal_category"] = category
    elif step == OnboardingStep.WEEKLY_HOURS:
        hours = parse_hours(text)
        if hours is None:
            return _reject(step, _failed_kind(text), "hours not in 0.5–80")
        updates["weekly_hours"] = hours
    elif step == OnboardingStep.BEST_TIME:
        best = parse_best_time(text)
        if not best:
            return _retry_default(answers, step, _failed_kind(text), rejected_in_row)
        updates["best_time"] = best
    elif step == OnboardingStep.CONFIDENCE:
        confidence = parse_confidence(text)
        if confidence is None:
            return _reject(step, _failed_kind(text), "confidence not in 1–10")
        updates["confidence"] = confidence
    return _finish(answers, step, updates, [])


def _failed_kind(text: str) -> str:
    """Why an answer the step's parser could not read was not an answer."""
    return non_answer_kind(text) or ("question" if _is_bare_question(text) else "unmatched")


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


def question_for(step: str, *, rejected_in_row: int = -1, last_reply: str = "") -> str:
    """The templated question for `step`: the plain question after an accepted answer, one of two
    re-prompt phrasings (alternating) after a rejection — and never the text the previous coach
    reply already carried, so the same templated question is never sent twice in a row."""
    if rejected_in_row < 0:
        order = (QUESTIONS, CLARIFY, CLARIFY_ALT)
    else:
        order = (CLARIFY, CLARIFY_ALT) if rejected_in_row % 2 == 0 else (CLARIFY_ALT, CLARIFY)
    for table in order:
        if table[step] not in last_reply:
            return table[step]
    return order[-1][step]


def reprompt(outcome: StepOutcome, rejected_in_row: int, last_reply: str = "") -> str:
    """The templated text for a rejected answer: a lead-in naming what the message was, then the
    step's question in a phrasing the previous reply did not use."""
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
    return (
        f"You're all set: “{answers.primary_goal}” ({label.lower()}), {hours} h a week, best in the "
        f"{answers.best_time}, confidence {answers.confidence}/10. Say “let's plan” whenever you want a weekly plan."
    )
