"""Profile values read from an answer, by rules: the goal's category (keywords of the fixed list,
category names, everyday words), weekly hours, the best time of day and the confidence. Pure
functions: no database, no model."""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal

from coaching.models import BestTime, GoalCategory

_WORD_NUMBERS = {
    "zero": 0, "half": 0.5, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
}

# Keyword rules for the fixed category list. Order matters: first match wins. Word-boundary
# prefixes, so "swimming" matches "swim" but "careful" does not match "career".
_CATEGORY_RULES: list[tuple[str, tuple[str, ...]]] = [
    (GoalCategory.LANGUAGE, ("language", "languages", "spanish", "french", "german", "italian", "portuguese",
                             "japanese", "chinese", "mandarin", "korean", "arabic", "russian", "english", "dutch",
                             "greek", "vocabulary", "grammar", "fluent", "fluency", "duolingo", "hindi", "swedish",
                             "czech", "polish", "turkish", "ukrainian", "vietnamese", "thai", "norwegian", "danish",
                             "finnish", "hungarian", "romanian", "hebrew", "persian", "farsi", "urdu", "bengali",
                             "indonesian", "tagalog", "swahili", "catalan", "basque", "welsh", "irish", "latin",
                             "cantonese", "sign language")),
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
CATEGORY_NAMES = {
    "language": GoalCategory.LANGUAGE, "languages": GoalCategory.LANGUAGE,
    "programming": GoalCategory.PROGRAMMING, "tech": GoalCategory.PROGRAMMING, "coding": GoalCategory.PROGRAMMING,
    "career": GoalCategory.CAREER, "professional": GoalCategory.CAREER, "work": GoalCategory.CAREER,
    "school": GoalCategory.ACADEMIC, "exams": GoalCategory.ACADEMIC, "exam": GoalCategory.ACADEMIC,
    "school/exams": GoalCategory.ACADEMIC, "academic": GoalCategory.ACADEMIC, "study": GoalCategory.ACADEMIC,
    "music": GoalCategory.MUSIC, "art": GoalCategory.ART, "creative": GoalCategory.ART,
    "sport": GoalCategory.SPORT, "fitness": GoalCategory.SPORT, "sport/fitness": GoalCategory.SPORT,
    "sports": GoalCategory.SPORT, "other": GoalCategory.OTHER, "something else": GoalCategory.OTHER,
    # An area named by its adjective ("maybe something musical?" got the off-topic deferral in a
    # trial of 2026-12-03, where "something with music" got the area's follow-up question).
    "musical": GoalCategory.MUSIC, "artistic": GoalCategory.ART, "arty": GoalCategory.ART,
    "sporty": GoalCategory.SPORT, "athletic": GoalCategory.SPORT,
}

TIME_RULES: list[tuple[str, tuple[str, ...]]] = [
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


def normalise(text: str) -> str:
    text = text.strip().lower().replace("’", "'")
    text = re.sub(r"[!.,;:]+$", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _keyword_pattern(keyword: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])" + re.escape(keyword) + r"(?![a-z])")


def keyword_matches(text: str, keyword: str) -> Iterator[re.Match[str]]:
    """Each place `keyword` stands as a word (or a word's start: "swim" in "swimming") in `text`."""
    return _keyword_pattern(keyword).finditer(text)


def has_keyword(text: str, keyword: str) -> bool:
    return _keyword_pattern(keyword).search(text) is not None



# A language's name before another noun names a kind of thing, not the language: "learn to cook
# proper Thai curries from scratch" was stored with the area "language" (trial of 2026-12-03,
# night), as "Spanish guitar" or "Italian cooking" would be. The name counts when the goal ends
# with it or goes on with a word that keeps it a language ("learn Thai so I can…", "my French B1
# exam", "English writing", "French films").
_LANGUAGE_WORDS = frozenset({"language", "languages", "vocabulary", "grammar", "fluent", "fluency", "duolingo",
                             "sign language"})
_AFTER_LANGUAGE_NAME = frozenset({
    "so", "to", "for", "and", "or", "with", "in", "by", "before", "because", "at", "this", "next", "well",
    "fluently", "properly", "better", "again", "online", "every", "each", "on", "from", "as", "until", "while",
    "when", "if", "but", "i", "my", "is", "exam", "exams", "test", "tests", "class", "classes", "lesson",
    "lessons", "course", "courses", "grammar", "vocabulary", "conversation", "conversations", "language",
    "level", "speaking", "reading", "writing", "listening", "skills", "words", "phrases", "script",
    "characters", "alphabet", "tones", "dialect", "fluent", "b1", "b2", "a1", "a2", "c1", "c2", "films", "movies",
    "tv", "shows", "books", "novels", "podcasts", "news", "newspapers", "subtitles", "songs", "literature"})
# Learning to cook, bake or garden is in no area of the fixed list but "other"; read before the
# learner is asked, once a language's name no longer decides it.
_OTHER_RULE = (GoalCategory.OTHER, ("cook", "cooking", "bake", "baking", "recipe", "recipes", "cuisine", "chef",
                                    "garden", "gardening", "chess"))


def _names_language(norm: str, keywords: tuple[str, ...]) -> bool:
    """A language keyword that names the language: a word about language itself, or a language's
    name at the end, before punctuation or before a word of _AFTER_LANGUAGE_NAME."""
    for keyword in keywords:
        for match in keyword_matches(norm, keyword):
            rest = norm[match.end():]
            next_word = re.match(r"\s*([a-z0-9]+)", rest)
            if (keyword in _LANGUAGE_WORDS or next_word is None or rest[0] in ".,;!?"
                    or next_word.group(1) in _AFTER_LANGUAGE_NAME):
                return True
    return False


def map_category(text: str) -> str | None:
    """Keyword rules over the fixed list. None when nothing matched (caller asks the learner)."""
    norm = normalise(text)
    if norm in CATEGORY_NAMES:
        return CATEGORY_NAMES[norm]
    for category, keywords in [*_CATEGORY_RULES, _OTHER_RULE]:
        if category == GoalCategory.LANGUAGE:
            if _names_language(norm, keywords):
                return category
        elif any(has_keyword(norm, k) for k in keywords):
            return category
    return None


def parse_category_answer(text: str) -> str | None:
    """An answer to the category question: a category name, a goal keyword, an everyday word
    ("for work", "it's a hobby"), or "other"."""
    norm = normalise(text)
    if norm in CATEGORY_NAMES:
        return CATEGORY_NAMES[norm]
    for word in re.findall(r"[a-z/]+", norm):
        if word in CATEGORY_NAMES and word not in ("work", "study"):
            return CATEGORY_NAMES[word]
    mapped = map_category(norm)
    if mapped:
        return mapped
    for category, keywords in _EVERYDAY_CATEGORY:
        if any(has_keyword(norm, k) for k in keywords):
            return category
    for word in ("work", "study"):
        if has_keyword(norm, word):
            return CATEGORY_NAMES[word]
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
    for value, keywords in TIME_RULES:
        if any(has_keyword(norm, k) for k in keywords):
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


# Values stated with their unit, so they can be read before (or after) their own question.
HOURS_WITH_UNIT = re.compile(
    r"(?i)\b(\d+(?:[.,]\d+)?|half|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty)"
    r"(?:\s*(?:-|to)\s*\d+(?:[.,]\d+)?)?\s*(?:hours?|hrs?|h)\b(?:\s*(?:a|per|each|/)\s*week)?")
CONFIDENCE_WITH_SCALE = re.compile(r"(?i)\b(\d{1,2})\s*(?:/|out of)\s*10\b")
