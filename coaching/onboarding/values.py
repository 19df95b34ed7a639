"""Profile values read from an answer, by rules: the goal's category (keywords of the fixed list,
category names, everyday words), weekly hours, the best time of day and the confidence. Pure
functions: no database, no model."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from coaching.models import BestTime, GoalCategory
from coaching.turn.reading.vocabulary import COUNT_WORDS, NUMBER_WORDS, normalise

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


# Names of one kind that a goal can swap for another of the same kind ("actually, make it Italian"
# when the goal is Spanish; "piano" when it is guitar). Only kinds whose names are interchangeable:
# an area's broad words ("run", "music", "grammar") are not.
_SWAPPABLE = (
    tuple(k for k in _CATEGORY_RULES[0][1] if k not in _LANGUAGE_WORDS),
    ("guitar", "piano", "violin", "drums", "drum", "ukulele", "bass", "cello", "saxophone", "flute"),
    ("python", "javascript", "java", "rust", "golang", "sql", "html", "css", "django", "react"),
)


def swap_name(goal: str, new: str) -> str | None:
    """`goal` with its name of one kind replaced by `new`, when `new` is one name of that kind and
    the goal holds another: ("get better at Spanish so I can talk with my partner's family",
    "Italian") -> "get better at Italian so I can talk with my partner's family". None otherwise."""
    word = normalise(new)
    for names in _SWAPPABLE:
        if word not in names:
            continue
        for name in names:  # keyword_matches: "java" does not match inside "javascript"
            match = next(keyword_matches(goal.lower(), name), None)
            if match and name != word:
                return goal[:match.start()] + new.strip() + goal[match.end():]
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


# How an amount of time relates to a week. The question asks for hours a week, but learners answer
# per day or per evening: "evenings after work, maybe 30 minutes" was stored as 0.5 h a week, and
# "2 hours a day" as 2 (a trial of 2026-12-04). A count ("3 times a week", "twice a week", "four
# evenings a week") or a day ("a day", "daily", "on weekdays") makes the weekly total; an amount per
# evening, session or time with no count is not a weekly total, and is asked again, not guessed.
_OCCASIONS = r"evenings?|mornings?|nights?|afternoons?|sessions?|lessons?|days?|times?|x"
_TIMES_A_WEEK = re.compile(rf"\b(\d+|{'|'.join(COUNT_WORDS)})\s*(?:(?:{_OCCASIONS})\s*)?"
                           r"(?:a|per|each|every|/)\s*week\b")
_PER_WEEK = re.compile(r"\b(?:a|per|each|every|/)\s*week\b|\bweekly\b|\bin total\b|\bin all\b|\ball together\b|"
                       r"\baltogether\b")
_PER_DAY = re.compile(r"\b(?:a|per|each|every|/)\s*day\b|\bdaily\b")
_PER_WEEKDAY = re.compile(r"\b(?:a|per|each|every|on)\s*weekdays?\b|\bweekdays\b")
# Per occasion, said as such ("each evening", "at a time"), or only by a plural ("evenings …, 30 minutes").
_EACH_OCCASION = re.compile(r"\b(?:a|per|each|every)\s+(evening|morning|night|afternoon|session|time|lesson|sitting)\b|"
                            r"\bat a time\b")
_PER_OCCASION = re.compile(rf"{_EACH_OCCASION.pattern}|\b(evenings|mornings|nights|afternoons)\b")
_HOURS_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:hours?|hrs?|h)\b")
_MINUTES_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)\s*-?\s*(?:min|mins|minutes?)\b")  # "30-minute sessions" too
_AN_HOUR = re.compile(r"\b(half an|half a|an|one)\s+hour\b")


_RANGE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:-|to|or)\s*(\d+(?:\.\d+)?)\s*(hours?|hrs?|h|min|mins|minutes)\b")
# A rate in days: "every other day", "every second day", "every 3 days" (times a week = 7 / n).
_EVERY_N_DAYS = re.compile(r"\bevery (?:(other|second|third)|(\d) days?)\b(?! week)")
_NTH = {"other": 2, "second": 2, "third": 3}


def _amount(norm: str, *, skip: str = "") -> tuple[float | None, str, bool]:
    """(hours, the words that said it, whether a unit was said) of one amount of time in `norm`
    (`skip`: a count's number, "3" of "3 times a week"). A range ("1-2 hrs") is its midpoint: the
    learner said both ends are likely, and the question asks for one number."""
    if match := _RANGE.search(norm):
        middle = (float(match.group(1)) + float(match.group(2))) / 2
        return (middle / 60.0 if match.group(3).startswith("m") else middle), match.group(0), True
    if match := _MINUTES_AMOUNT.search(norm):
        return float(match.group(1)) / 60.0, match.group(0), True
    if match := _HOURS_AMOUNT.search(norm):
        return float(match.group(1)), match.group(0), True
    if match := _AN_HOUR.search(norm):
        return (0.5 if match.group(1).startswith("half") else 1.0), match.group(0), True
    for match in re.finditer(r"\d+(?:\.\d+)?", norm):
        if match.group(0) != skip:
            if half := re.match(r"\s+and a half\b", norm[match.end():]):  # "2 and a half" was read as 2
                return float(match.group(0)) + 0.5, match.group(0) + half.group(0), False
            return float(match.group(0)), match.group(0), False
    words = re.findall(r"[a-z]+", norm)
    for i, word in enumerate(words):
        if word in NUMBER_WORDS and word != skip:
            value, said = float(NUMBER_WORDS[word]), word
            if words[i + 1:i + 4] == ["and", "a", "half"]:  # "two and a half"
                value, said = value + 0.5, f"{word} and a half"
            unit = words[i + 4 if said != word else i + 1:][:1]
            if unit and unit[0] in ("min", "mins", "minutes"):  # "thirty minutes"
                return value / 60.0, f"{said} {unit[0]}", True
            return value, said + (f" {unit[0]}" if unit and unit[0] in ("hour", "hours") else ""), bool(
                unit and unit[0] in ("hour", "hours"))
    return None, "", False


@dataclass(frozen=True)
class _HoursRead:
    weekly: float | None  # hours a week, when they can be read
    amount: float | None  # the amount said, in hours
    said: str  # the words that said it
    with_unit: bool
    per: str  # "week" | "count" | "day" | "weekday" | "occasion" | "" (nothing said)
    each: str = ""  # the occasion ("evening") when per == "occasion"


def _read_hours(text: str) -> _HoursRead:
    norm = normalise(text).replace(",", ".")
    if count := _TIMES_A_WEEK.search(norm):
        times = count.group(1)
        n = float(int(times) if times.isdigit() else COUNT_WORDS[times])
        value, said, unit = _amount(norm.replace(count.group(0), " "), skip=times)
        return _HoursRead(value * n if value is not None else None, value, said, unit, "count")
    if every := _EVERY_N_DAYS.search(norm):
        n = _NTH[every.group(1)] if every.group(1) else int(every.group(2))
        value, said, unit = _amount(norm.replace(every.group(0), " "))
        return _HoursRead(value * 7 / n if value is not None and n else None, value, said, unit, "day")
    value, said, unit = _amount(norm)
    if value is None or _PER_WEEK.search(norm):
        return _HoursRead(value, value, said, unit, "week" if value is not None else "")
    if _PER_DAY.search(norm):
        return _HoursRead(value * 7, value, said, unit, "day")
    if _PER_WEEKDAY.search(norm):
        return _HoursRead(value * 5, value, said, unit, "weekday")
    # A bare number answers the question asked (hours a week) even beside "mornings".
    if unit and (occasion := _PER_OCCASION.search(norm)):
        each = (occasion.group(1) or occasion.group(2) or "time").rstrip("s")
        return _HoursRead(None, value, said, unit, "occasion", each)
    return _HoursRead(value, value, said, unit, "")


def parse_hours(text: str) -> Decimal | None:
    """Hours a week: '3', '3 hours', '2.5h', '2,5', 'three', 'about 4 hrs/week', '90 minutes', 'an
    hour a day' (7), '30 minutes 4 times a week' (2), '1 hour on weekdays' (5). None if not a
    number, outside 0.5–80, or an amount per evening or session with no count of them
    (`hours_per_occasion`). Ranges ('3-4') take the lower bound: plan for what is sure."""
    value = _read_hours(text).weekly
    if value is None or not (0.5 <= value <= 80):
        return None
    return Decimal(str(round(value, 2))).quantize(Decimal("0.01"))


def hours_per_occasion(text: str) -> tuple[str, str, Decimal] | None:
    """("30 minutes", "evening", 2.5) when the answer gives an amount per evening, session or time
    and no count of them, so no weekly total can be read from it; the last item is five of them."""
    read = _read_hours(text)
    if read.per != "occasion" or read.amount is None:
        return None
    return read.said, read.each, Decimal(str(round(read.amount * 5 * 2) / 2)).quantize(Decimal("0.1"))


def session_minutes(text: str) -> int | None:
    """The length of one sitting when the learner gives an amount per day, per evening or session,
    or with a count ("20 minutes a day", "half an hour every evening", "30-minute sessions", "45
    minutes, four evenings a week"); None for a week's total, a bare number, or an amount beside a
    plural only ("evenings …, 30 minutes"). 10–180 minutes."""
    read = _read_hours(text)
    norm = normalise(text)
    # A plural alone ("evenings after work, maybe 30 minutes") leaves the weekly hours open and is
    # asked about (hours_per_occasion); it does not set a sitting's length.
    per_sitting = (read.per in ("day", "weekday", "count") or (read.per == "occasion" and _EACH_OCCASION.search(norm))
                   or (read.per == "" and re.search(r"\bsessions?\b", norm)))
    if read.amount is None or not read.with_unit or not per_sitting:
        return None
    minutes = round(read.amount * 60)
    return minutes if 10 <= minutes <= 180 else None


def says_time_amount(text: str) -> bool:
    """The text states an amount of time with its unit ("maybe 2 hours a day", "an hour")."""
    return _amount(normalise(text).replace(",", "."))[2]


# A time of day named as a moment, not as a habit: "I did 20 minutes of Duolingo this morning" was
# stored as the best time "morning" (trial of 2026-12-04).
_A_MOMENT = re.compile(r"(?:\b(?:this|yesterday|last|tomorrow|one|that|on (?:monday|tuesday|wednesday|thursday|"
                       r"friday|saturday|sunday))\s+)$")


def parse_best_time(text: str) -> str | None:
    norm = normalise(text)
    for value, keywords in TIME_RULES:
        # "tonight" is a moment by itself (plan_request still reads it as this evening).
        if any(not _A_MOMENT.search(norm[:m.start()]) and m.group(0) != "tonight"
               for k in keywords for m in keyword_matches(norm, k)):
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
            if word in NUMBER_WORDS and float(NUMBER_WORDS[word]).is_integer():
                value = int(NUMBER_WORDS[word])
                break
    if value is None or not 1 <= value <= 10:
        return None
    return value


# Values stated with their unit, so they can be read before (or after) their own question.
HOURS_WITH_UNIT = re.compile(
    r"(?i)\b(\d+(?:[.,]\d+)?|half|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty)"
    # minutes too: "…, maybe 20 minutes a day" said with the goal was asked for again
    r"(?:\s*(?:-|to)\s*\d+(?:[.,]\d+)?)?\s*(?:hours?|hrs?|h|minutes?|mins?)\b"
    # the period said with it, so the amount is read per week, per day or per evening (parse_hours)
    r"(?:\s*(?:(?:a|per|each|every|/|on)\s*(?:week|day|weekday|evening|morning|night|afternoon|session)s?|daily))?")
CONFIDENCE_WITH_SCALE = re.compile(r"(?i)\b(\d{1,2})\s*(?:/|out of)\s*10\b")
