"""Profile values read from an answer, by rules: the goal's category (keywords of the fixed list,
category names, everyday words), weekly hours, the best time of day and the confidence. Pure
functions: no database, no model."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from coaching.models import BestTime, GoalCategory
from coaching.turn.reading.vocabulary import (
    CHANGE_OF_MIND_WORDS,
    COMPARED_BEFORE,
    NUMBER_WORDS,
    NUMBER_WORDS_ELSEWHERE,
    SESSION_WORDS,
    normalise,
)

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
    # An area named by its adjective: "maybe something musical?" is the area music, as "something
    # with music" is.
    "musical": GoalCategory.MUSIC, "artistic": GoalCategory.ART, "arty": GoalCategory.ART,
    "sporty": GoalCategory.SPORT, "athletic": GoalCategory.SPORT,
}

# The areas' names in the other languages whose units and times of day are read (Spanish,
# Portuguese, French, German, Italian, Dutch): a closed class, the translation of the eight areas the
# category question names, read only as an answer to it ("música", "los idiomas", "Sprache
# natürlich", "autre chose").
CATEGORY_NAMES_ELSEWHERE = {
    GoalCategory.LANGUAGE: ("idioma", "idiomas", "língua", "línguas", "lingua", "lingue", "langue", "langues",
                            "sprache", "sprachen", "taal", "talen"),
    GoalCategory.PROGRAMMING: ("programación", "programação", "programmation", "programmierung", "programmazione",
                               "programmeren", "informática", "informatique", "informatik", "informatica"),
    GoalCategory.CAREER: ("trabajo", "trabalho", "travail", "arbeit", "beruf", "lavoro", "werk", "carrière",
                          "carreira", "karriere", "carriera", "profesional", "profissional", "professionnel"),
    GoalCategory.ACADEMIC: ("escuela", "escola", "école", "schule", "scuola", "exámenes", "exames", "examens",
                            "prüfung", "prüfungen", "esami", "universidad", "universidade", "université",
                            "universität", "università"),
    GoalCategory.MUSIC: ("música", "musique", "musik", "musica", "muziek"),
    GoalCategory.ART: ("arte", "artes", "kunst"),
    GoalCategory.SPORT: ("deporte", "deportes", "esporte", "esportes", "sportif"),
    GoalCategory.OTHER: ("otro", "otra", "outro", "outra", "autre", "andere", "altro", "anders"),
}
_AREA_ELSEWHERE = {word: area for area, words in CATEGORY_NAMES_ELSEWHERE.items() for word in words}

# Spanish "noche" and Portuguese "noite" run from the evening into the night: read as the evening,
# unless a clock time said with them is in the night ("à noite, depois das 22h").
_EVENING_INTO_NIGHT = ("por la noche", "de noche", "las noches", "à noite", "de noite", "pela noite", "noites")
# The times of day in the other languages learners write in (Spanish, Portuguese, French, German,
# Italian, Dutch, Russian, Japanese), a closed class as the weekdays are (vocabulary.py). Words that
# also mean something else count only in their time-of-day phrase: "mañana" alone is tomorrow,
# "tarde" late, "sera" (French) "will be", "Morgen" tomorrow.
_TIMES_ELSEWHERE = {
    BestTime.MORNING: ("por la mañana", "de la mañana", "en la mañana", "las mañanas", "mañanas", "de manhã",
                       "pela manhã", "manhã", "manhãs", "le matin", "matin", "matins", "morgens", "am morgen",
                       "vormittag", "vormittags", "mattina", "mattino", "ochtend", "'s ochtends", "утром", "утро",
                       "朝"),
    BestTime.MIDDAY: ("mediodía", "almoço", "midi", "mittag", "mittags", "pranzo", "обед"),
    BestTime.AFTERNOON: ("por la tarde", "de la tarde", "las tardes", "à tarde", "a tarde", "de tarde", "pela tarde",
                         "après-midi", "nachmittag", "nachmittags", "pomeriggio", "middag", "'s middags", "днём",
                         "днем", "午後"),
    BestTime.EVENING: ("le soir", "soir", "soirs", "soirée", "abend", "abends", "di sera", "la sera", "alla sera",
                       "avond", "'s avonds", "вечером", "вечер", "夕方", *_EVENING_INTO_NIGHT),
    BestTime.NIGHT: ("la nuit", "de nuit", "nachts", "in der nacht", "di notte", "la notte", "'s nachts", "ночью",
                     "夜"),
}
TIME_RULES: list[tuple[str, tuple[str, ...]]] = [
    (BestTime.FLEXIBLE, ("flexible", "any time", "anytime", "whenever", "depends")),
    (BestTime.MORNING, ("morning", "mornings", "before work", "sunrise", "breakfast",
                        *_TIMES_ELSEWHERE[BestTime.MORNING])),
    (BestTime.MIDDAY, ("midday", "noon", "lunch", "lunchtime", *_TIMES_ELSEWHERE[BestTime.MIDDAY])),
    (BestTime.AFTERNOON, ("afternoon", "afternoons", "after school", "after lunch",
                          *_TIMES_ELSEWHERE[BestTime.AFTERNOON])),
    (BestTime.EVENING, ("evening", "evenings", "after work", "after dinner", "tonight",
                        *_TIMES_ELSEWHERE[BestTime.EVENING])),
    (BestTime.NIGHT, ("night", "nights", "late at night", "midnight", "before bed", "bedtime",
                      *_TIMES_ELSEWHERE[BestTime.NIGHT])),
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
# proper Thai curries from scratch" is not a language goal, nor are "Spanish guitar" or "Italian
# cooking". The name counts when the goal ends
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


# A word that takes back what was said before it ("programming lol no, other"; "music, wait, art").
_TAKEN_BACK = re.compile(rf"(?i)\b(?:{CHANGE_OF_MIND_WORDS}|no|nope|nah)\b[\s,.!:;—–-]+")


def parse_category_answer(text: str) -> str | None:
    """An answer to the category question: a category name, a goal keyword, an everyday word
    ("for work", "it's a hobby"), or "other". An area named after the learner takes back an
    earlier one is the answer."""
    for later in reversed(_TAKEN_BACK.split(text)[1:]):
        if area := _category_named(later):
            return area
    return _category_named(text)


def _category_named(text: str) -> str | None:
    norm = normalise(text)
    if norm in CATEGORY_NAMES:
        return CATEGORY_NAMES[norm]
    # A word of a time-of-day phrase names when, not the area: "work" in "mornings before work".
    norm = _without_times_of_day(norm)
    # "other" names the area, not in "every other day" or "the other one".
    words = re.sub(r"\b(?:every|each|the|any|some|an)\s+other\b|\bother\s+(?:than|days?|weeks?|times?|ones?)\b",
                   " ", norm)
    for word in re.findall(r"[a-z/]+", words):
        if word in CATEGORY_NAMES and word not in ("work", "study"):
            return CATEGORY_NAMES[word]
    mapped = map_category(norm)
    if mapped:
        return mapped
    if elsewhere := [_AREA_ELSEWHERE[w] for w in re.findall(r"[^\W\d_]+", norm) if w in _AREA_ELSEWHERE]:
        return elsewhere[0]
    for category, keywords in _EVERYDAY_CATEGORY:
        if any(has_keyword(norm, k) for k in keywords):
            return category
    for word in ("work", "study"):
        if has_keyword(norm, word):
            return CATEGORY_NAMES[word]
    return None


# How an amount of time relates to a week. The question asks for hours a week, but learners answer
# per day or per evening: "evenings after work, maybe 30 minutes" was stored as 0.5 h a week, and
# "2 hours a day" as 2. A count ("3 times a week", "twice a week", "four
# evenings a week") or a day ("a day", "daily", "on weekdays") makes the weekly total; an amount per
# evening, session or time with no count is not a weekly total, and is asked again, not guessed.
# --- amounts of time and how often ----------------------------------------------------------------
# A grammar of amounts ("2h30", "an hour or two", "1-2 hrs", "between 5 and 8 hours", "ninety
# minutes", "an hour and a half", "quarter of an hour") and of rates ("a day", "every other day",
# "3x a week", "2 or 3 evenings a week", "mon wed fri", "on weekends", "2 sessions of an hour").
# Units are read in the languages learners wrote in most (the number itself is code's to read).
_WORD_NUM = "|".join(sorted((re.escape(w) for w in NUMBER_WORDS if " " not in w), key=len, reverse=True))
_NUM = rf"\d+(?:[.,]\d+)?|{_WORD_NUM}"
_WORD_NUM_ELSEWHERE = "|".join(sorted((re.escape(w) for w in NUMBER_WORDS_ELSEWHERE), key=len, reverse=True))
_H_UNIT = r"hours?|hrs?|h|horas?|heures?|stunden?|std|ore|ora|uur|godzin[ay]?"
_M_UNIT = r"minutes?|mins?|minutos?|minuti|minuten|minuty|m"
_UNIT = rf"(?:{_H_UNIT}|{_M_UNIT})"
# "between 2 and 3" in the languages whose units of time are read ("entre 2 y 3 horas", "zwischen 2
# und 3 Stunden", "tra 2 e 3 ore", "tussen 2 en 3 uur").
_BETWEEN = r"(?:between|entre|zwischen|tra|fra|tussen)"
_AND = r"(?:and|y|e|et|und|en)"
_AMOUNT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("hm", re.compile(r"\b(\d{1,2})\s*h\s*(\d{2})\b")),
    # Hours and minutes said together ("1 hour 15 min", "2 hrs and 30 minutes"): one amount.
    ("h_and_m", re.compile(rf"\b(\d{{1,2}}|an?|one)\s*(?:{_H_UNIT})\s*(?:and\s+)?(\d{{1,2}})\s*(?:{_M_UNIT})\b")),
    ("range", re.compile(rf"\b(?:{_BETWEEN}\s+({_NUM})\s+{_AND}|({_NUM})\s*(?:-|–|to|or|ou|o|à|a|bis|tot))\s*({_NUM})"
                         rf"\s*({_UNIT})\b")),
    ("unit_or_n", re.compile(r"\b(?:an?|one)\s+(hour|minute)s?\s+or\s+(two|2|three|3)\b")),
    ("and_half", re.compile(rf"\b(?:(an?|one)\s+(hour)\s+and\s+a\s+half|({_NUM})\s+and\s+a\s+half"
                            rf"(?:\s+({_UNIT}))?)\b")),
    ("half", re.compile(r"\b(?:half an?|1/2 an?|a half)\s*(?:hour|hr|h)\b")),
    ("quarter", re.compile(r"\b(?:a\s+)?quarter\s+(?:of\s+an\s+)?hour\b")),
    ("couple", re.compile(r"\ba\s+couple\s+(?:of\s+)?(hours?|minutes?)\b")),
    # "an hour", and with a word between that does not change it ("a solid hour", "a full hour").
    ("an_hour", re.compile(r"\b(?:an?|one)\s+(?:(?!half\b|quarter\b)[a-z]+\s+)?hour\b")),
    ("unit", re.compile(rf"\b({_NUM})\s*-?\s*({_UNIT})\b")),
    # A number word of another language counts only right before its unit ("trois heures").
    ("unit_elsewhere", re.compile(rf"(?<!\w)({_WORD_NUM_ELSEWHERE})(?:\s+|\s*-\s*|(?<=')\s*)({_UNIT})\b")),
    ("range_bare", re.compile(rf"\b(?:{_BETWEEN}\s+({_NUM})\s+{_AND}|({_NUM})\s*(?:-|–|to|or|ou|o))\s*({_NUM})\b")),
    ("bare", re.compile(rf"\b({_NUM})\b")),
)


def _num(word: str) -> float:
    word = word.strip().lower()
    if word[0].isdigit():
        return float(word.replace(",", "."))
    return float(NUMBER_WORDS[word] if word in NUMBER_WORDS else NUMBER_WORDS_ELSEWHERE[word])


def _in_hours(value: float, unit: str | None) -> float:
    return value / 60.0 if unit and re.fullmatch(_M_UNIT, unit) else value


@dataclass(frozen=True)
class _Amount:
    hours: float
    said: str
    with_unit: bool
    start: int
    end: int
    elsewhere: bool = False  # its number is a word of another language


def _amounts(norm: str) -> list[_Amount]:
    """Every amount of time in `norm`, left to right; the first pattern that reads a stretch wins."""
    found: list[_Amount] = []
    taken = [False] * len(norm)
    for kind, pattern in _AMOUNT_PATTERNS:
        for m in pattern.finditer(norm):
            if any(taken[m.start():m.end()]):
                continue
            g = m.groups()
            if kind == "hm":
                hours, unit = int(g[0]) + int(g[1]) / 60.0, True
            elif kind == "h_and_m":
                hours, unit = (int(g[0]) if g[0][0].isdigit() else 1) + int(g[1]) / 60.0, True
            elif kind == "range":
                low = _num(g[0] or g[1])
                hours, unit = _in_hours((low + _num(g[2])) / 2, g[3]), True
            elif kind == "unit_or_n":
                hours, unit = _in_hours((1 + _num(g[1])) / 2, "min" if g[0] == "minute" else "h"), True
            elif kind == "and_half":
                hours, unit = ((1.5, True) if g[0] else (_in_hours(_num(g[2]) + 0.5, g[3]), bool(g[3])))
            elif kind in ("half", "quarter", "an_hour"):
                hours, unit = {"half": 0.5, "quarter": 0.25, "an_hour": 1.0}[kind], True
            elif kind == "couple":
                hours, unit = _in_hours(2, "min" if g[0].startswith("min") else "h"), True
            elif kind in ("unit", "unit_elsewhere"):
                if g[1] in ("m", "h") and not g[0][0].isdigit():
                    continue
                hours, unit = _in_hours(_num(g[0]), g[1]), True
            elif kind == "range_bare":
                hours, unit = (_num(g[0] or g[1]) + _num(g[2])) / 2, False
            else:
                hours, unit = _num(g[0]), False
            found.append(_Amount(hours, m.group(0), unit, m.start(), m.end(), elsewhere=kind == "unit_elsewhere"))
            for i in range(m.start(), m.end()):
                taken[i] = True
    return sorted(found, key=lambda a: a.start)


_COUNT_NUM = rf"{_NUM}|once|twice|thrice"
_OCCASION_WORDS = r"x|times?|sessions?|days?|evenings?|mornings?|nights?|afternoons?|lessons?|sittings?"
_TIMES_A_WEEK = re.compile(rf"\b({_COUNT_NUM})(?:\s*(?:-|to|or|ou)\s*({_NUM}))?\s*(?:(?:{_OCCASION_WORDS})\s*)?"
                           r"(?:a|per|each|every|/|in the|in a)\s*week\b")
_COUNTS_SITTINGS = re.compile(rf"\b(?:{_OCCASION_WORDS}|twice|once|thrice)\b|\d\s*[x×]")
# A count of sittings of a length: "3 sessions of 40 min" and its forms in the languages whose units
# of time are read ("3 sessões de 40 min", "2 séances de 30 minutes", "3 Einheiten von 45 Minuten").
_SESSIONS_OF = rf"(?:{SESSION_WORDS}|lessons?|blocks?|slots?|x)\s+(?:of|at|de|di|von|van|po|à)\b"
_N_SESSIONS_OF = re.compile(rf"\b({_NUM})\s*(?:{_SESSIONS_OF}|[x×]\s*(?=\d)|"
                            # "three 45-minute sessions", "two 1-hour lessons": the count, then each one's length
                            rf"\s(?=(?:{_NUM})\s*-?\s*(?:{_UNIT})\b-?\s*(?:sessions?|lessons?|blocks?|slots?|sittings?)\b))")
_PER_WEEK = re.compile(r"\b(?:a|per|each|every|/)\s*week\b|\bweekly\b|\bin total\b|\bin all\b|\ball together\b|"
                       r"\baltogether\b|\bpor semana\b|\bpar semaine\b|\bpro woche\b|\bin der woche\b|"
                       r"\b(?:a|alla|per) settimana\b|\bper week\b|\bin de week\b|\bw tygodniu\b|\ba la semana\b|"
                       r"\bsemanais\b|\bsemanales\b")
_PER_DAY = re.compile(r"\b(?:a|per|each|every|/)\s*day\b|\bdaily\b|\beveryday\b|\bpor d[ií]a\b|\bal d[ií]a\b|"
                      r"\bpar jour\b|\bpro tag\b|\bam tag\b|\bal giorno\b|\bper dag\b|\bdziennie\b")
_EXCEPT_ONE = re.compile(r"\b(?:except|but not|apart from|besides)\s+(?:on\s+)?(?:monday|tuesday|wednesday|thursday|"
                         r"friday|saturday|sunday)s?\b|\bexcept (?:one|1) day\b")
_PER_WEEKDAY = re.compile(r"\b(?:a|per|each|every|on)\s*(?:weekdays?|work\s?days?)\b|\b(?:weekdays|work\s?days)\b")
_ON_WEEKENDS = re.compile(r"\b(?:on|at|over)?\s*(?:the\s+)?weekends?\b|\bweekend days\b|"
                          r"\bsat(?:urday)?s? and sun(?:day)?s?\b")
# A rate in days: "every other day", "every second day", "every 3 days" (times a week = 7 / n).
_EVERY_N_DAYS = re.compile(r"\bevery (?:(other|second|third)|(\d) days?)\b(?! week)")
_NTH = {"other": 2, "second": 2, "third": 3}
# Per occasion, said as such ("each evening", "at a time"), or only by a plural ("evenings …, 30 minutes").
_EACH_OCCASION = re.compile(r"\b(?:a|per|each|every)\s+(evening|morning|night|afternoon|session|time|lesson|sitting)\b|"
                            r"\bat a time\b")
_PER_OCCASION = re.compile(rf"{_EACH_OCCASION.pattern}|\b(evenings|mornings|nights|afternoons)\b")
_DAY_NAME = re.compile(r"\b(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|sday|rsday|urday)?s?\b")


def _midpoint(low: str, high: str | None) -> float:
    first = {"once": 1, "twice": 2, "thrice": 3}.get(low) or _num(low)
    return (first + _num(high)) / 2 if high else float(first)


@dataclass(frozen=True)
class _HoursRead:
    weekly: float | None  # hours a week, when they can be read
    amount: float | None  # the amount said, in hours (one sitting's, when a rate multiplies it)
    said: str  # the words that said it
    with_unit: bool
    per: str  # "week" | "count" | "day" | "weekday" | "occasion" | "" (nothing said)
    each: str = ""  # the occasion ("evening") when per == "occasion"


def _nearest(amounts: list[_Amount], at: int) -> _Amount:
    return min(amounts, key=lambda a: min(abs(a.start - at), abs(a.end - at)))


_ANY_NUMBER = re.compile(rf"\d|(?<!\w)(?:{_WORD_NUM}|{_WORD_NUM_ELSEWHERE})(?!\w)")


def _plain_elsewhere(norm: str, amounts: list[_Amount]) -> bool:
    """An amount whose number is a word of another language is taken only where nothing else is to
    read: one amount, said per week, no other number in the message. The rates and afterthoughts
    of other languages ("media hora cada día", "deux heures par semaine, peut-être trois", "una hora
    los lunes y miércoles") are not read by this grammar; such an answer is asked about again
    rather than half read."""
    rest = norm
    for a in amounts:
        rest = rest[:a.start] + " " * (a.end - a.start) + rest[a.end:]
    return len(amounts) == 1 and bool(_PER_WEEK.search(norm)) and not _ANY_NUMBER.search(rest)


# From one clock time to another ("every evening 8-9", "from 7 to 8:30", "6-7pm"): when, not how
# long; no amount of hours.
_CLOCK_TO = r"(\d{1,2}(?::\d{2})?\s*(?:am|pm)?\s*(?:-|–|to|until|till)\s*\d{1,2}(?::\d{2})?\s*(?:am|pm)?)"
_CLOCK_SPAN = re.compile(rf"\b(?:mornings?|evenings?|nights?|afternoons?|from|at)\s+{_CLOCK_TO}"
                         r"(?!\s*(?:hours?|hrs?|h\b|minutes?|mins?))|"
                         r"\b(\d{1,2}(?::\d{2})?\s*(?:-|–|to)\s*\d{1,2}(?::\d{2})?\s*(?:am|pm))\b")


def _amounts_said(text: str) -> tuple[str, list[_Amount]]:
    """The message as the hours are read in it, and its amounts of time (a number word of another
    language only where nothing else is left to read)."""
    norm = re.sub(r"(\d),(\d)", r"\1.\2", normalise(text))
    norm = re.sub(r"\b(?:on )?a scale (?:of|from) (?:1|one) to (?:10|ten)\b|\b(?:1|one) (?:to|-) (?:10|ten)\b",
                  " ", norm)
    norm = _CLOCK_SPAN.sub(lambda m: m.group(0).replace(span := m.group(1) or m.group(2), " " * len(span)), norm)
    amounts = _amounts(norm)
    if any(a.elsewhere for a in amounts) and not _plain_elsewhere(norm, amounts):
        amounts = [a for a in amounts if not a.elsewhere]
    return norm, amounts


def _read_hours(text: str) -> _HoursRead:
    norm, amounts = _amounts_said(text)
    if not amounts:
        return _HoursRead(None, None, "", False, "")
    # A count of sittings is no amount: "3x a week", "2 sessions of an hour", "three days a week".
    count_match = _TIMES_A_WEEK.search(norm) or _N_SESSIONS_OF.search(norm)
    if count_match:
        counted = [a for a in amounts if not (count_match.start() <= a.start < count_match.end() and not a.with_unit)]
        if counted:
            amounts = counted
        elif _COUNTS_SITTINGS.search(count_match.group(0)):
            # "3 times a week": how often, and no word of how long: no amount to store (asked).
            return _HoursRead(None, None, "", False, "")
        else:
            count_match = None  # "2 a week", "2-3 a week": the number is the week's amount, not a count
    timed = [a for a in amounts if a.with_unit] or amounts
    outside = norm if not count_match else norm[:count_match.start()] + " " * len(count_match.group(0)) + \
        norm[count_match.end():]
    if week := _PER_WEEK.search(outside):
        before = [a for a in timed if a.end <= week.start()]
        chosen = before[-1] if before else _nearest(timed, week.start())
        if count_match and count_match.re is _N_SESSIONS_OF and chosen.start >= count_match.end():
            # "3 x 45 min a week": the sittings' length times their count is the week.
            times = _midpoint(count_match.group(1), None)
            return _HoursRead(chosen.hours * times, chosen.hours, chosen.said, chosen.with_unit, "count")
        return _HoursRead(chosen.hours, chosen.hours, chosen.said, chosen.with_unit, "week")
    if count_match:
        times = _midpoint(count_match.group(1), count_match.group(2) if count_match.re is _TIMES_A_WEEK else None)
        chosen = _nearest(timed, count_match.start())
        return _HoursRead(chosen.hours * times, chosen.hours, chosen.said, chosen.with_unit, "count")
    if every := _EVERY_N_DAYS.search(norm):
        n = _NTH[every.group(1)] if every.group(1) else int(every.group(2))
        chosen = _nearest(timed, every.start())
        return _HoursRead(chosen.hours * 7 / n, chosen.hours, chosen.said, chosen.with_unit, "day")
    chosen = timed[0]
    norm = _without_compared_days(norm)
    days = {m.group(1)[:3] for m in _DAY_NAME.finditer(norm)}
    if len(days) < 2:
        days = set()  # "I sat down for an hour": one short word is no day
    if _PER_DAY.search(norm) and _ON_WEEKENDS.search(norm):
        return _HoursRead(chosen.hours * 2, chosen.hours, chosen.said, chosen.with_unit, "count")
    if _PER_DAY.search(norm):
        if _PER_WEEKDAY.search(norm):
            return _HoursRead(chosen.hours * 5, chosen.hours, chosen.said, chosen.with_unit, "weekday")
        daily = 6 if _EXCEPT_ONE.search(norm) else 7
        return _HoursRead(chosen.hours * daily, chosen.hours, chosen.said, chosen.with_unit, "day")
    if _PER_WEEKDAY.search(norm):
        return _HoursRead(chosen.hours * 5, chosen.hours, chosen.said, chosen.with_unit, "weekday")
    if chosen.with_unit and len(days) >= 2:  # "40 mins mon wed fri"
        return _HoursRead(chosen.hours * len(days), chosen.hours, chosen.said, True, "count")
    if chosen.with_unit and _ON_WEEKENDS.search(norm):  # "an hour or two on weekends": each weekend day
        return _HoursRead(chosen.hours * 2, chosen.hours, chosen.said, True, "count")
    # A bare number answers the question asked (hours a week) even beside "mornings".
    if chosen.with_unit and (occasion := _PER_OCCASION.search(norm)):
        each = (occasion.group(1) or occasion.group(2) or "time").rstrip("s")
        return _HoursRead(None, chosen.hours, chosen.said, True, "occasion", each)
    return _HoursRead(chosen.hours, chosen.hours, chosen.said, chosen.with_unit, "")


_DAY_OR_WEEKEND = re.compile(r"\bweekend days\b|\bweekends?\b|\bweekdays?\b|" + _DAY_NAME.pattern)


def _without_compared_days(norm: str) -> str:
    """The text with each day named after a comparative blanked ("more on weekends" varies the
    amount said before it: no rate per weekend day)."""
    for match in reversed(list(_DAY_OR_WEEKEND.finditer(norm))):
        if COMPARED_BEFORE.search(norm[max(0, match.start() - 32):match.start()]):
            norm = norm[:match.start()] + " " * (match.end() - match.start()) + norm[match.end():]
    return norm


_A_SCORE = re.compile(r"\ban?\s+$")  # "like a 4": a score, not an amount
_ENDS_CLAUSE = re.compile(r"\s*(?:$|[,.;:!?)]|(?:on|in|if|when|at|or|but|max|tops|ish)\b)")


def amounts_apart(text: str) -> list[str]:
    """The amounts said when a message gives two or more different ones with nothing to tell which
    is the week's ("i'd say 5 but realistically 3", "maybe 4, maybe 5"): no rate, period or count
    goes with them, and they are no range ("5 or 6", "between 6 and 8" are one amount). Empty when
    one amount, or a rate, says it."""
    read = _read_hours(text)
    if read.weekly is None or read.per:
        return []
    norm, amounts = _amounts_said(text)
    if any(a.with_unit for a in amounts):
        # With a unit said, a bare number before a noun counts something else ("one long session of
        # 4 hours"); one that ends its clause is another amount ("3 ore, forse 4", "1 hour? 1.5 on a
        # good week"), unless it is a score ("my confidence is like a 4").
        amounts = [a for a in amounts if a.with_unit or (_ENDS_CLAUSE.match(norm, a.end)
                                                          and not _A_SCORE.search(norm, 0, a.start))]
    if len({round(a.hours, 2) for a in amounts}) < 2:
        return []
    return [a.said for a in amounts]


def parse_hours(text: str) -> Decimal | None:
    """Hours a week: '3', '3 hours', '2.5h', '2,5', 'three', 'about 4 hrs/week', '90 minutes', 'an
    hour a day' (7), '30 minutes 4 times a week' (2), '1 hour on weekdays' (5). None if not a
    number, outside 0.5–80, or an amount per evening or session with no count of them
    (`hours_per_occasion`). Ranges ('3-4') take the lower bound: plan for what is sure."""
    value = _read_hours(text).weekly
    if value is None or not (0.5 <= value <= 80):
        return None
    return Decimal(str(round(value, 2))).quantize(Decimal("0.01"))


def said_with_unit(text: str) -> bool:
    """The message gives an amount of time with its unit ("3 hours", "half an hour", "20 min a day"),
    not a bare number."""
    return _read_hours(text).with_unit


def hours_with_rate(quote: str, sentence: str) -> Decimal | None:
    """The weekly hours of an amount quoted from a sentence, read with the rate said around it in
    that sentence ("half an hour" in "every other day for half an hour" is 1.75, not 0.5); the quote
    alone when the sentence's amount is another one."""
    read = _read_hours(sentence)
    if read.said and read.said.lower() in quote.lower():
        return parse_hours(sentence)
    return parse_hours(quote)


def amount_period(text: str) -> str:
    """What the amount of time said is per: "week", "count", "day", "weekday", "occasion", or ""
    when no period is said with it ("make it 4 hours")."""
    return _read_hours(text).per


def hours_per_occasion(text: str) -> tuple[str, str, Decimal] | None:
    """("30 minutes", "evening", 2.5) when the answer gives an amount per evening, session or time
    and no count of them, so no weekly total can be read from it; the last item is five of them."""
    read = _read_hours(text)
    if read.per != "occasion" or read.amount is None:
        return None
    return read.said, read.each, Decimal(str(round(read.amount * 5 * 2) / 2)).quantize(Decimal("0.1"))


def sittings_a_week(text: str) -> float | None:
    """How many sittings a week a message gives with no length of them ("3 times a week", "twice a
    week"), or None."""
    norm, amounts = _amounts_said(text)
    count = _TIMES_A_WEEK.search(norm)
    if count is None or not _COUNTS_SITTINGS.search(count.group(0)) or any(a.with_unit for a in amounts):
        return None
    return _midpoint(count.group(1), count.group(2))


def hours_over_two_messages(text: str, before: str) -> Decimal | None:
    """The week's hours when one message says how often and the other how long each time ("3 times
    a week", then "40 min each time"; in either order): neither alone is a weekly total."""
    # Said after the count, an amount of no period answers "about how long each time?" ("about 45
    # min each"); said before it, only an amount per occasion is one sitting's.
    for counted, each, periods in ((before, text, ("occasion", "")), (text, before, ("occasion",))):
        times, read = sittings_a_week(counted), _read_hours(each)
        if times and read.per in periods and read.amount is not None:
            return Decimal(str(round(times * read.amount, 2))).quantize(Decimal("0.01"))
    return None


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
    amount = read.amount
    if read.per == "week":
        # "three hours per week, sessions of 45 min": the sitting is the other amount.
        others = [a for a in _amounts(norm) if a.with_unit and a.said != read.said]
        sitting = re.search(r"\b(?:sessions?|lessons?|blocks?|sittings?|chunks?)\b", norm)
        amount = others[0].hours if others and sitting else None
        per_sitting = amount is not None
    if amount is None or not read.with_unit or not per_sitting:
        return None
    minutes = round(amount * 60)
    return minutes if 10 <= minutes <= 180 else None


# "22h", "às 7h": a number with a bare "h" and no period after it is how many languages write a
# clock time; outside the hours question it is no amount of time.
CLOCK_LIKE = re.compile(r"(?i)\b\d{1,2}\s*h\b(?!\s*\d)(?!\s*(?:a|per|each|every|/)\s*(?:week|day))")


def says_time_amount(text: str) -> bool:
    """The text states an amount of time with its unit ("maybe 2 hours a day", "an hour"), not a
    clock time written with "h" ("vers 22h")."""
    return any(a.with_unit for a in _amounts(CLOCK_LIKE.sub(" ", normalise(text))))


# A time of day named as a moment, not as a habit: "I did 20 minutes of Duolingo this morning" was
# stored as the best time "morning".
# "whenever the kids are asleep", "whenever my shift ends": a time set by something else, which code
# cannot place — no flexible time (the question stays); "whenever I can" is.
_A_CONDITION = re.compile(r"\s+(?:the|my|our|his|her|their|its|your|this|that|these|those)\b")
_A_MOMENT = re.compile(r"(?:\b(?:this|yesterday|last|tomorrow|one|that|on (?:monday|tuesday|wednesday|thursday|"
                       r"friday|saturday|sunday))\s+)$")


def _time_phrases(norm: str):
    """(match, time of day) for each phrase of TIME_RULES in `norm`."""
    return ((m, value) for value, keywords in TIME_RULES for k in keywords for m in keyword_matches(norm, k))


def _without_times_of_day(norm: str) -> str:
    """`norm` with the phrases that name a time of day ("before work", "after school") blanked out."""
    for match, _ in list(_time_phrases(norm)):
        norm = norm[:match.start()] + " " * (match.end() - match.start()) + norm[match.end():]
    return norm


def parse_best_time(text: str) -> str | None:
    """The one time of day the text names, or None. Two different ones ("thursday evenings and
    saturday afternoon", "mornings or evenings") are not one answer: None, and the question stays.
    A phrase inside a longer one ("lunch" in "after lunch") is the longer one's."""
    norm = normalise(text)
    values, denies = _parts_of_day(norm)
    if len(values) > 1:
        return None
    if not values and denies:
        return None  # "not mornings, I'm a zombie before 10am": when not, and no when
    clock = _clock_period(norm)
    if values:
        worded = values.pop()
        if clock and clock[0] == BestTime.NIGHT and worded == BestTime.EVENING and any(
                has_keyword(norm, word) for word in _EVENING_INTO_NIGHT):
            return BestTime.NIGHT
        if (clock and clock[1] and worded in _DAY_ORDER
                and abs(_DAY_ORDER.index(clock[0]) - _DAY_ORDER.index(worded)) > 1):
            # "I'm on night shifts so... 2pm?": a clock time far from the part of the day a word
            # names says when; the word is about something else.
            return clock[0]
        return worded
    return clock[0] if clock else None


def parts_of_day_named(text: str) -> set[str]:
    """The parts of the day the words name as wanted ("weekdays evening, weekend morning": two)."""
    return _parts_of_day(normalise(text))[0]


def _parts_of_day(norm: str) -> tuple[set[str], bool]:
    """The parts of the day named as wanted, and whether one is named as not wanted."""
    named, denies = [], False
    for m, value in _time_phrases(norm):
        if _DENIED.search(norm[:m.start()]):
            denies = True
        # "tonight" is a moment by itself (plan_request still reads it as this evening).
        elif (not _A_MOMENT.search(norm[:m.start()]) and m.group(0) != "tonight"
              and not (value == BestTime.FLEXIBLE and _A_CONDITION.match(norm, m.end()))):
            named.append((m.start(), m.end(), value))
    return {value for start, end, value in named
            if not any(s <= start and end <= e and (e - s) > (end - start) for s, e, _ in named)}, denies


# A part of the day said as not wanted ("not mornings", "anything but evenings") is no answer.
_DENIED = re.compile(r"\b(?:not|no|never|except|anything but|apart from|other than)\s+(?:(?:in|on|at)\s+)?"
                     r"(?:the\s+)?$")
_DAY_ORDER = (BestTime.MORNING, BestTime.MIDDAY, BestTime.AFTERNOON, BestTime.EVENING, BestTime.NIGHT)


def denied(span: str, source: str) -> bool:
    """The words just before `span` in `source` say it is not wanted ("not mornings")."""
    at = source.lower().find(span.lower())
    return at >= 0 and bool(_DENIED.search(normalise(source[:at]) + " "))


def _clock_period(norm: str) -> tuple[str, bool] | None:
    """The part of the day a clock time falls in, and whether its half of the day is said ("2pm",
    "14:00"; "evening 8:30" is 20:30 and says none). A clock time needs its marker ("7pm", "6:30",
    "8 o'clock"): a bare "5" is more likely a confidence or an hour count given at the wrong step
    than a time of day."""
    match = re.search(r"\b(\d{1,2})(?::\d{2}|\s*(am|pm|o'?clock)\b)", norm)
    if not match:
        # "20h", "21h30": the hour of a 24-hour clock, as Portuguese, Spanish and French write it (a
        # smaller number with an h is an amount: "2h").
        match = re.search(r"\b(1[3-9]|2[0-3])h(?:\d{2})?\b()", norm)
    if not match:
        return None
    hour = int(match.group(1)) % 24
    clear = match.group(2) in ("am", "pm") or hour == 0 or hour > 12
    if match.group(2) == "pm" and hour < 12:
        hour += 12
    if 5 <= hour < 11:
        return BestTime.MORNING, clear
    if 11 <= hour < 14:
        return BestTime.MIDDAY, clear
    if 14 <= hour < 18:
        return BestTime.AFTERNOON, clear
    if 18 <= hour < 22:
        return BestTime.EVENING, clear
    return BestTime.NIGHT, clear


_SCALE = re.compile(r"\b(?:on )?(?:a )?scale (?:of|from) (?:1|one) to (?:10|ten)\b|\b(?:from )?(?:1|one) (?:to|-) "
                    r"(?:10|ten)\b")
_OUT_OF_TEN = re.compile(r"\b(\d{1,2})\s*(?:/|out of|of|sur|von|de|su|op|na)\s*10\b")
# "this one", "the first one", "which one": a pronoun, not a number.
_ONE_PRONOUN = re.compile(r"\b(?:this|that|the|which|a|each|every|any|no|other|first|second|last|next) one\b")


def parse_confidence(text: str) -> int | None:
    """A confidence from 1 to 10: "7", "7/10", "8 out of 10", "pretty confident, like eight", "sete",
    "4 out of 5" (8), "70%" (7), "11/10" (10). The scale itself ("on a scale of 1 to 10") is no answer,
    nor is an amount of time ("4 hours") or "this one". A range ("6-7", "between 4 and 8") is its
    midpoint, a half rounded down (what is sure, as for the hours); two numbers said apart ("10 for
    motivation, 2 for discipline") are asked about."""
    norm = normalise(text)
    if scaled := _OTHER_SCALE.search(norm):
        if scaled.group(1):
            value = round(int(scaled.group(1)) * 10 / int(scaled.group(2)))
        else:
            value = int(scaled.group(3)) // 10
        return min(10, max(1, value))
    numbers = confidence_numbers(text)
    if len(numbers) == 2 and (span := _SCORE_RANGE.search(_amounts_removed(norm))) and {
            int(span.group(1)), int(span.group(2))} == numbers:
        numbers = {sum(numbers) // 2}
    if len(numbers) != 1:
        return None
    value = numbers.pop()
    return value if 1 <= value <= 10 else None


# A score on another scale: "4 out of 5", "3/5", "70%", "80 percent".
_OTHER_SCALE = re.compile(r"\b(\d{1,3})\s*(?:/|out of|of)\s*(5|100)\b|\b(\d{1,3})\s*(?:%|percent\b)")
# Two scores said as a range: "6-7", "between 4 and 8", "5 to 6", "5 or 6".
_SCORE_RANGE = re.compile(r"\b(?:between\s+)?(\d{1,2})\s*(?:-|–|to|and|or)\s*(\d{1,2})\b(?!\s*(?:/|out of))")


def _amounts_removed(norm: str) -> str:
    """The text without the amounts of time said with their unit ("4 hours"): no score."""
    for amount in _amounts(norm):
        if amount.with_unit:
            norm = norm.replace(amount.said, " ")
    return norm


def confidence_numbers(text: str) -> set[int]:
    """Every number the text could give as a score (not the scale, an amount of time or "this one")."""
    norm = _SCALE.sub(" ", normalise(text))
    scored = {int(m.group(1)) for m in _OUT_OF_TEN.finditer(norm)}
    norm = _amounts_removed(_ONE_PRONOUN.sub(" ", _OUT_OF_TEN.sub(" ", norm)))
    # "11/10": more than the scale holds is its top.
    numbers = {min(n, 10) for n in scored} | {int(m) for m in re.findall(r"\b(\d{1,2})\b", norm)}
    numbers |= {int(NUMBER_WORDS[w]) for w in re.findall(r"[a-z]+", norm)
                if w in NUMBER_WORDS and float(NUMBER_WORDS[w]).is_integer() and NUMBER_WORDS[w] >= 1}
    # A number word of another language opening the answer ("sete", "cinco, más o menos"); not one
    # that is also an article ("un", "eine"), unless it is the whole answer.
    first = re.match(r"\s*([^\W\d_]+)", norm)
    if first and (value := NUMBER_WORDS_ELSEWHERE.get(first.group(1))) and float(value).is_integer() and (
            value > 1 or norm.strip() == first.group(1)):
        numbers.add(int(value))
    return numbers


# Values stated with their unit, so they can be read before (or after) their own question.
HOURS_WITH_UNIT = re.compile(
    r"(?i)\b(\d+(?:[.,]\d+)?|half|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty)"
    # minutes too: "…, maybe 20 minutes a day" said with the goal was asked for again
    r"(?:\s*(?:-|to)\s*\d+(?:[.,]\d+)?)?\s*(?:hours?|hrs?|h|minutes?|mins?)\b"
    # the period said with it, so the amount is read per week, per day or per evening (parse_hours)
    r"(?:\s*(?:(?:a|per|each|every|/|on)\s*(?:week|day|weekday|evening|morning|night|afternoon|session)s?|daily))?")
CONFIDENCE_WITH_SCALE = re.compile(r"(?i)\b(\d{1,2})\s*(?:/|out of)\s*10\b")
