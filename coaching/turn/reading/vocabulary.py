"""The words every reader shares, one copy each: normalising a message, numbers written as words,
yes and no, ordinals, weekdays and counts. Readers import these; none keeps a list of its own.

Pure data and small functions: no database, no model."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

# --- normalising ------------------------------------------------------------------------------


def normalise(text: str) -> str:
    """Lower case, typographic apostrophes made plain, trailing punctuation and repeated spaces
    removed. Inner punctuation stays: "2.5", "7/10" and "6:30" keep their meaning."""
    text = text.strip().lower().replace("’", "'")
    text = re.sub(r"[!.,;:]+$", "", text)
    return re.sub(r"\s+", " ", text).strip()


_EMOJI = re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F\u200D]")


def bare_words(text: str) -> str:
    """The words of `text` only: punctuation and emoji become spaces (for matching whole phrases
    such as a greeting, whatever marks surround it)."""
    text = text.strip().lower().replace("’", "'")
    text = re.sub(r"[!.,;:?~)(*]+", " ", text)
    text = _EMOJI.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip()


MISSPELT_RATIO = 0.8


def misspelt(said: str, word: str) -> bool:
    """`said` is `word` with one slip ("lern"/"learn", "thrusday"/"thursday"): equal, or alike
    enough in a word of four letters or more. Numbers are equal or they are different numbers."""
    said, word = said.lower().replace("’", "'"), word.lower().replace("’", "'")
    if said == word:
        return True
    if any(c.isdigit() for c in said + word) or min(len(said), len(word)) < 4:
        return False
    return SequenceMatcher(None, said, word).ratio() >= MISSPELT_RATIO


# --- numbers ----------------------------------------------------------------------------------
NUMBER_WORDS: dict[str, float] = {
    "zero": 0, "half": 0.5, "one": 1, "a couple": 2, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}
# The same numbers in the other languages learners write in (Spanish, Portuguese, French, Italian,
# German, Dutch): a closed class, read only right before a unit of time ("trois heures", "eine
# Stunde"), where "due", "sei" or "um" cannot be the English word or "I know", and only where
# nothing else in the message is left to read (onboarding.values: the "unit_elsewhere" amount and
# `_plain_elsewhere`).
NUMBER_WORDS_ELSEWHERE: dict[str, float] = {
    **dict.fromkeys(("media", "meia", "demi", "demie", "mezza", "mezz'", "halbe", "halben", "halve"), 0.5),
    **dict.fromkeys(("un", "una", "uno", "um", "uma", "une", "ein", "eine", "einer", "een"), 1),
    **dict.fromkeys(("dos", "duas", "dois", "deux", "due", "zwei", "twee"), 2),
    **dict.fromkeys(("tres", "três", "trois", "tre", "drei", "drie"), 3),
    **dict.fromkeys(("cuatro", "quatro", "quatre", "quattro", "vier"), 4),
    **dict.fromkeys(("cinco", "cinq", "cinque", "fünf", "funf", "vijf"), 5),
    **dict.fromkeys(("seis", "sei", "sechs", "zes"), 6),
    **dict.fromkeys(("siete", "sete", "sept", "sette", "sieben", "zeven"), 7),
    **dict.fromkeys(("ocho", "oito", "huit", "otto", "acht"), 8),
    **dict.fromkeys(("nueve", "nove", "neuf", "neun", "negen"), 9),
    **dict.fromkeys(("diez", "dez", "dix", "dieci", "zehn", "tien"), 10),
    **dict.fromkeys(("quince", "quinze", "quindici", "fünfzehn", "vijftien"), 15),
    **dict.fromkeys(("veinte", "vinte", "vingt", "venti", "zwanzig", "twintig"), 20),
    **dict.fromkeys(("treinta", "trinta", "trente", "trenta", "dreißig", "dertig"), 30),
}
# How many times: "twice a week", "three sessions".
COUNT_WORDS: dict[str, int] = {"once": 1, "twice": 2, "thrice": 3, "both": 2,
                               **{w: int(n) for w, n in NUMBER_WORDS.items() if 1 <= n <= 7 and n == int(n)}}
ORDINALS: dict[str, int] = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "last": -1}
# The same ordinals in the other languages learners write in (Spanish, Portuguese, French, Italian,
# German, Dutch), both genders: a closed class. Read only in a short reply ("la segunda", "a
# primeira opção"), where "prima" is no "before" and "segundo" no unit of time.
ORDINALS_ELSEWHERE: dict[str, int] = {
    **dict.fromkeys(("primera", "primero", "primeira", "primeiro", "première", "premier", "prima", "primo",
                     "erste", "ersten", "eerste"), 0),
    **dict.fromkeys(("segunda", "segundo", "deuxième", "seconde", "seconda", "secondo", "zweite", "zweiten",
                     "tweede"), 1),
    **dict.fromkeys(("tercera", "tercero", "terceira", "terceiro", "troisième", "terza", "terzo", "dritte",
                     "dritten", "derde"), 2),
    **dict.fromkeys(("última", "último", "dernière", "dernier", "ultima", "ultimo", "letzte", "letzten",
                     "laatste"), -1),
}

# --- yes and no -------------------------------------------------------------------------------
# With yes and no in the other languages learners write in (the coach says back what it understood
# and asks; "sí" is their yes), and the thumbs-up.
YES_WORDS = ("yes", "yeah", "yep", "yup", "sure", "ok", "okay", "sounds good", "let's do it", "lets do it",
             "let's do that", "go for it", "perfect", "great", "please", "do it", "fine", "deal", "works for me",
             "sí", "si", "sì", "sim", "oui", "ja", "tak", "да", "はい", "evet", "👍", "👌")
NO_WORDS = ("no", "nope", "nah", "neither", "no thanks", "not really", "none", "none of them", "don't", "dont",
            "não", "nao", "non", "nein", "nee", "nej", "nie", "нет", "いいえ", "hayır", "👎")
_YES_START = re.compile(r"^\s*(?:" + "|".join(re.escape(w) for w in YES_WORDS) + r")(?!\w)")
_NO_START = re.compile(r"^\s*(?:" + "|".join(re.escape(w) for w in NO_WORDS) + r")(?!\w)")


def says_yes(text: str) -> bool:
    """The message opens by agreeing ("yes please", "ok let's do it", "sure!")."""
    return bool(_YES_START.search(normalise(text))) and not says_no(text)


def says_no(text: str) -> bool:
    """The message opens by declining ("no thanks", "neither", "nah")."""
    return bool(_NO_START.search(normalise(text)))


# --- changing one's mind -----------------------------------------------------------------------
# "B. wait, A", "learn Spanish — actually, Italian": what follows replaces what came before.
CHANGE_OF_MIND_WORDS = (r"actually|wait|no+ wait|correction|scratch that|on second thought|i mean|or rather|jk|"
                        r"just kidding")
CHANGE_OF_MIND = re.compile(rf"(?i)\b(?:{CHANGE_OF_MIND_WORDS})\b")


# Words a learner opens a request with before its modal ("hey, can you…", "ok so could we…",
# "wait can i…"): one list for every reader of a request put as a question.
LEAD_FILLER = r"(?:(?:hey|hi|ok|okay|so|um|also|and|coach|wait)[\s,!]+)*"


# --- a session, named ----------------------------------------------------------------------------
# The word for a study session in the languages learners write in (English first).
SESSION_WORDS = (r"sessions?|sess(?:ões|ão|ioni|ione|ies?)|sesi(?:ones|ón)|séances?|einheiten|sitzung(?:en)?|"
                 r"sesj[aeiy]|занят\w*|сесси\w*")


# --- a plan, named -------------------------------------------------------------------------------
# The word for a plan or a schedule in the languages learners write in: a model's proposal that a
# message asks for a plan is taken when the message names one ("monta um plano pra mim", "buat
# jadwal minggu ini", "план на неделю"), though it carries no value. Not "planned" ("as planned").
PLAN_WORDS = re.compile(r"(?i)\b(?:plan(?!ned)\w*|schedul\w*|timetable|routine|cronograma|hor[áa]rio|programa|"
                        r"emploi du temps|zeitplan|wochenplan|programma|rooster|harmonogram\w*|jadwal|lịch|"
                        r"расписани\w*|план\w*)\b|計画|スケジュール")


# --- a value said as the one replaced ------------------------------------------------------------
# "make it 4 hours instead of 3", "B, at 8 rather than 7:30": the value after "instead of" is the
# old one the learner replaces, never the new one. Readers of values read the text without it.
# Whom a move or a cancel acts on is still read from the whole message ("saturday instead of
# thursday" names Thursday's session). The markers are a closed class, in English and the six
# languages whose numbers and units are read.
_REPLACED = re.compile(
    r"(?i)\b(?:instead of|rather than|in place of|en vez de|en lugar de|em vez de|au lieu de|anstatt|statt|"
    r"invece di|in plaats van)\s+(?:(?:the|my|a|an|o|el|la|le|der|die|das|il)\s+)?"
    r"(?:\d{1,2}(?:[:.h]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|o'?clock|h\b|hours?|hrs?|minutes?|mins?)?|[^\W\d_]+)")


def without_replaced(text: str) -> str:
    """The text without the values it says it replaces."""
    return _REPLACED.sub(" ", text)


# A verb in the past, in English: the regular "-ed" forms and the irregular pasts of the verbs
# learners report with (a closed class of English grammar).
PAST_VERB = re.compile(r"\b(?:[a-z]{2,}ed|went|did|ran|swam|got|made|had|was|were|wrote|sang|drew|took|gave|"
                       r"felt|kept|left|came|saw|began|spent|slept|forgot|rode|drove|ate|won|lost|sat|read|done|gone|been|"
                       r"managed|fought|caught|taught|thought|bought|brought|built|held|met|paid|said|told|"
                       r"understood|stood|knew|grew|threw|flew|blew|fell|hit|put|set|cut|let|quit)\b")


# --- saying that something did not happen ------------------------------------------------------
# Negation and its commonest forms in the languages learners have written to the coach: a closed
# class, used to check a proposed report's outcome against the words (code settles, not the model).
_NEGATION = re.compile(r"(?i)(?:\b(?:not|no|nope|nah|never|missed|skipped|didn'?t|couldn'?t|wasn'?t|won'?t|"
                       r"can'?t|não|nao|nunca|pas|raté|nicht|kein\w*|nein|non|niet|geen|inte|nie)\b|n't\b|"
                       r"(?<!\w)не(?!\w))")


def negated(text: str) -> bool:
    """The words say no or not ("didn't happen", "yesterday was a no", "no pude", "niet gelukt")."""
    return bool(_NEGATION.search(text.replace("’", "'")))


# --- days -------------------------------------------------------------------------------------
# Days named after a comparative ("2 or 3 hours, more on weekends", "a bit less on fridays") vary
# an amount said before them: they are neither the only days nor a rate per day. Matched against
# the words just before a day's name.
COMPARED_BEFORE = re.compile(r"\b(?:more|less|longer|shorter|extra|fewer)(?:\s+(?:time|hours?|minutes?|mins?))?"
                             r"\s+(?:on|at|over|during)\s+(?:the\s+)?$")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DAY_CODES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# A weekday as written: full names with an optional plural or possessive, and the usual short forms
# ("thurs", "tues"); "sat" and "wed" alone are words too ("I sat down"), so short forms need a dot,
# a possessive or a capital in the learner's text to count (read_weekday).
_WEEKDAY = re.compile(r"\b(mon|tue|tues|wed|wednes|thu|thur|thurs|fri|sat|satur|sun)(day)?(s|'s)?\b")


_WORD = re.compile(r"[a-z]+(?='s\b|s\b)|[a-z]+")
# The weekday names of the other languages learners write in (Spanish, Portuguese, French, German,
# Italian, Dutch, Polish, Russian, Japanese): a closed class, so that a move, a report or a cancellation
# the model proposes in those words names its day for code to find the session. A German or Dutch
# name may start a compound ("Freitagseinheit"). Portuguese "segunda", "quarta", "quinta" and
# "sexta" are ordinals too ("a segunda" is the second option): a day with "-feira" or after a
# preposition ("de quinta pra sábado").
_WEEKDAYS_ELSEWHERE = (
    r"lunes|lundi|montag\w*|luned[iì]|maandag\w*|poniedział\w*|понедельник\w*",
    r"martes|ter[çc]a(?:-feira)?|mardi|dienstag\w*|marted[iì]|dinsdag\w*|wtor\w*|вторник\w*",
    r"mi[ée]rcoles|mercredi|mittwoch\w*|mercoled[iì]|woensdag\w*|środ[aęyo]\w*|сред[аеуы]",
    r"jueves|jeudi|donnerstag\w*|gioved[iì]|donderdag\w*|czwart(?:ek|ku|kow)\w*|четверг\w*",
    r"viernes|vendredi|freitag\w*|venerd[iì]|vrijdag\w*|piąt(?:ek|ku|kow)\w*|пятниц\w*",
    r"s[áa]bado|samedi|samstag\w*|sonnabend|sabato|zaterdag\w*|sobot\w*|суббот\w*",
    r"domingo|dimanche|sonntag\w*|domenica|zondag\w*|niedziel\w*|воскресень\w*",
)
_WEEKDAY_ELSEWHERE = re.compile("|".join(rf"\b(?P<d{i}>{names})\b" for i, names in enumerate(_WEEKDAYS_ELSEWHERE))
                                + r"|\b(?:(?:de|da|do|na|no|nas|pra|para|até|à|às|toda|cada)\s+)?"
                                  r"(?P<pt>segunda|quarta|quinta|sexta)(?P<feira>-feira)?s?\b"
                                + "|(?P<ja>[月火水木金土日])曜")
_PT_ORDINAL_DAY = {"segunda": 0, "quarta": 2, "quinta": 3, "sexta": 4}
_JA_DAY = "月火水木金土日"


def _weekdays_elsewhere(lower: str) -> list[tuple[int, re.Match[str]]]:
    found = []
    for match in _WEEKDAY_ELSEWHERE.finditer(lower):
        if match.group("ja"):
            found.append((_JA_DAY.index(match.group("ja")), match))
        elif match.group("pt"):
            if match.group("feira") or match.group(0) != match.group("pt"):
                found.append((_PT_ORDINAL_DAY[match.group("pt")], match))
        else:
            found.append((next(i for i in range(7) if match.group(f"d{i}")), match))
    return found


# A clock time right after a short day name makes it the day ("sat at 10", "sun 9am").
_CLOCK_AFTER = re.compile(r"\s+(?:at\s+\d{1,2}\b|\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\d{1,2}:\d{2}\b)")


# "the wed one", "this sun session": a short form between a determiner and a word for a session.
_DETERMINER_BEFORE = re.compile(r"\b(?:the|this|next|last|that|every)\s+$")
_SESSION_AFTER = re.compile(r"\s+(?:one|session|practice|lesson|class|workout|run|slot)\b")


# Between two days of a list ("mon, wed and fri", "sat/sun").
DAY_LIST_JOIN = re.compile(r"\s*(?:,|and|or|&|/|, and|, or)\s*")


def in_a_list(match: re.Match[str], others: list[re.Match[str]]) -> bool:
    """The day `match` names is listed with one of `others` ("mon, wed and fri")."""
    return any(other is not match and DAY_LIST_JOIN.fullmatch(
        match.string[min(match.end(), other.end()):max(match.start(), other.start())]) for other in others)


def weekdays_named(text: str, *, short_words: bool = False, in_lists: bool = False) -> list[tuple[int, re.Match[str]]]:
    """Each weekday the text names, in order, with its match. A short form counts only when it
    is not an English word on its own ("sat", "wed", "sun" need "day", a dot or a clock time after them, or to
    stand between "the" and a session word; with `in_lists`, to be listed with another day: "mon,
    wed and fri"), unless `short_words` (a pick among options: "the sat one"). A full name typed
    with one slip ("thrusday", "wendsday") counts as the one day it is closest to."""
    lower = text.lower()
    found = []
    every = list(_WEEKDAY.finditer(lower))
    for match in every:
        short = match.group(1)
        listed = in_lists and in_a_list(match, every)
        if (match.group(2) is None and short in ("sat", "wed", "sun") and not short_words and not listed
                and text[match.end():match.end() + 1] != "." and not _CLOCK_AFTER.match(lower, match.end())
                and not (_DETERMINER_BEFORE.search(lower, 0, match.start())
                         and _SESSION_AFTER.match(lower, match.end()))):
            continue
        found.append((DAY_CODES.index(short[:3]), match))
    found += _weekdays_elsewhere(lower)
    taken = [m.span() for _, m in found]
    for match in _WORD.finditer(lower):
        if len(match.group(0)) < 6 or any(a <= match.start() < b for a, b in taken):
            continue
        # The one day it is most alike, alike enough to be that day misspelt (`misspelt`'s measure).
        alike = sorted(((SequenceMatcher(None, match.group(0), day).ratio(), i) for i, day in enumerate(WEEKDAYS)),
                       reverse=True)
        if alike[0][0] >= MISSPELT_RATIO and alike[0][0] > alike[1][0]:
            found.append((alike[0][1], match))
    return sorted(found, key=lambda pair: pair[1].start())


# Today, yesterday and tomorrow, as offsets in days, in the same languages. "mañana" after "la" or
# "esta" is the morning, and "Morgen" after "heute", "guten" or "am" too; French "hier" only with
# its evening or morning or as "d'hier" (alone it is "here" in German and Dutch).
_RELATIVE_DAYS = (
    (0, r"today|tonight|this (?:morning|afternoon|evening)|hoy|esta (?:mañana|manana|tarde|noche)|hoje|hj|"
        r"esta (?:manhã|manha|tarde|noite)|aujourd'hui|ce (?:matin|soir)|cet après-midi|heute|oggi|stamattina|"
        r"stasera|vandaag|vanochtend|vanmiddag|vanavond|сегодня"),
    (-1, r"yesterday|last night|ayer|anoche|ontem|d'hier|hier (?:soir|matin)|gestern|ieri|gisteren|вчера"),
    (1, r"tomorrow|tmrw|tmr|(?<!la )(?<!esta )ma[ñn]ana|amanh[ãa]|demain|(?<!heute )(?<!guten )(?<!am )morgen|"
        r"domani|завтра"),
)
_RELATIVE_DAY = re.compile("|".join(rf"\b(?P<o{n}>{words})(?:'s)?\b" for n, (_, words) in enumerate(_RELATIVE_DAYS))
                           + "|(?P<ja0>今日)|(?P<ja1>昨日)|(?P<ja2>明日)")


def relative_days(text: str) -> list[tuple[int, re.Match[str]]]:
    """Each "today", "yesterday" or "tomorrow" the text says (in any of the languages above, and
    "tonight", "this morning", "tmrw"), as its offset in days from today, in order."""
    found = []
    for match in _RELATIVE_DAY.finditer(text.lower()):
        n = next(i for i in range(3) if match.group(f"o{i}") or match.group(f"ja{i}"))
        found.append((_RELATIVE_DAYS[n][0], match))
    return found


# --- questions ----------------------------------------------------------------------------------
# A clause that asks: it opens with a question word, a modal or "is/are", or with "do/did/have/was…"
# followed by its subject ("did you…", "was it…"). "did/had/was" followed by anything else opens a
# clipped report ("did 20 minutes of scales", "had my first lesson", "was great today"). A question
# word may carry its "is" with or without the apostrophe ("what's", "whats"); followed by its
# subject it opens a clause that names something ("what I want is to learn guitar"), not a question.
QUESTION_WORDS = r"(?:what|why|how|who|whom|whose|when|where|which)(?:'?s)?"
# A question word opening a question (not followed by its subject).
WH_START = rf"(?:{QUESTION_WORDS})\b(?!\s+(?:i|we|they|he|she)\b)"
QUESTION_START = re.compile(
    rf"(?i)^\s*(?:{WH_START}|any (?:idea|ideas|tips)\b|"
    r"(?:can|could|would|will|shall|should|may|might|must|is|are|am)\b|"
    r"(?:do|does|did|have|has|had|was|were)(?:n't)?\s+(?:i|you|we|they|he|she|it|this|that|there|u)\s+\w)")
# The question words of the other languages learners write in: a short message with one of them
# and a question mark asks ("¿cuántas sesiones tengo?"); it is no answer offered unsure.
# (Accented only where the bare word is also "like" or "that": "como 2 horas?" offers an answer.)
QUESTION_WORDS_ELSEWHERE = (r"qué|cu[aá]nt[oa]s?|cuándo|cómo|dónde|quant[oa]s?|quando|onde|combien|quand|"
                            r"comment|où|pourquoi|quel(?:le)?s?|wie(?:viel\w*)?|wann|warum|welche\w*|quanti|"
                            r"quante|dove|perch[eé]|hoeveel|wanneer|waar|waarom|ile|kiedy|jak|gdzie|dlaczego|"
                            r"berapa|kapan|bagaimana|kenapa|сколько|когда|как|где|почему|ne zaman|kaç|nasıl")
QUESTION_WORD = re.compile(rf"(?i)\b(?:{QUESTION_WORDS}|{QUESTION_WORDS_ELSEWHERE})\b")
