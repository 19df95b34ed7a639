"""Intent parsers: what a learner message asks for, read by rules BEFORE anything is written.

A defect this guards against: "can we move the sessions I missed?" contains "missed", was routed
as a session report and code wrote a skip nobody reported. Here a message is a *report* only when
it states, in the past tense and not as a question, that a session was done or skipped; a
question, a plan request and a reschedule request are told apart from it first. The parser also
reads which session a report refers to ("today", "yesterday", "Tuesday's", "both"), and
`report_targets` resolves it against the sessions that could be meant, so the turn writes only on
an unambiguous reference and otherwise asks. Answers to offered choices ("option B", "the second
one", "yes") are resolved here too. Pure functions: no database, no model, no clock."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, tzinfo

from coaching.turn.reading.vocabulary import (
    CHANGE_OF_MIND,
    COUNT_WORDS,
    ORDINALS,
    ORDINALS_ELSEWHERE,
    PAST_VERB,
    QUESTION_START,
    negated,
    relative_days,
    says_yes,
    weekdays_named,
)

REPORT, QUESTION, PLAN, RESCHEDULE, UNDO, OTHER = "report", "question", "plan_request", "reschedule", "undo", "other"


@dataclass(frozen=True)
class Intent:
    kind: str
    outcome: str = ""  # reports: completed | skipped
    reference: str = ""  # today | yesterday | weekday | all | last | "" (none given)
    weekday: int | None = None  # 0 = Monday, when reference == "weekday"
    count: int | None = None  # "two sessions", "both"
    cue: str = ""  # the words that decided it (stored as the routing reason)


_UNDO = re.compile(
    r"^\s*(?:undo|undo (?:that|it|this)|revert(?: that)?|cancel (?:that|it)|take (?:that|it) back|scratch that)\b"
    r"|^\s*no[,!.]?\s+i (?:didn'?t|did not|haven'?t|have not)\b"
    r"|^\s*(?:that'?s|that is) (?:wrong|not (?:right|true|what i said))\b"
    r"|^\s*i (?:didn'?t|did not) (?:say|mean) that\b|^\s*(?:no|nope),? (?:that'?s )?(?:wrong|not right)\b"
    r"|^\s*(?:please )?(?:remove|delete) (?:that|it)\b")
_RESCHEDULE = re.compile(
    r"\b(?:reschedul\w*|move|moving|shift|push(?:ing)? (?:\w+ ){0,2}back|push(?:ing)? (?:\S+ ){1,3}(?:to|till|until)|"
    r"postpone|rearrange|make up for|make them up|"
    r"catch up on|redo|fit (?:them|it) in|put (?:them|it) (?:on|to)|another (?:day|time)|later (?:day|in the week))\b")
# A session by its word, or by its day's possessive ("saturday's", "tonight's").
_SESSION_WORDS = re.compile(r"\b(?:sessions?|practices?|lessons?|workouts?|them|it|those|ones?|missed|skipped|"
                            r"\w+day's|tonight's|tmrw's)\b")
_PLAN = re.compile(r"\blet'?s plan\b|\bplan (?:my|the|this|next) week\b|\bmake (?:me )?a plan\b|"
                   r"\b(?:new|weekly|study) plan\b|\bschedule (?:a |my |some )?sessions?\b|\bplan (?:some )?sessions\b")
_FUTURE = re.compile(r"\b(?:will|won'?t|going to|gonna|might|may|plan to|planning to|thinking (?:of|about)|"
                     r"if i|should i|tomorrow|next week|later today|tonight i'?ll)\b")

_DONE = re.compile(
    r"\b(?:i )?(?:did|finished|completed|done with) (?:it|my|the|today'?s|yesterday'?s|a|both|all|\w+day(?:'?s)?) ?"
    r"(?:session|sessions|practice|lesson|workout|run|swim)?\b"
    r"|\bi (?:did|finished|completed|practiced|practised|studied|trained|went|ran|swam|played|managed)\b"
    r"|^\s*(?:done|finished|completed)\b|\b(?:session|practice|lesson|workout) (?:is |was )?"
    r"(?:done|complete|completed|finished)\b|\bjust (?:did|finished)\b|\bdid \d+ ?(?:min|minutes|k|km|m)\b"
    r"|^\s*did (?:it|my|the|\d+)")
_SKIPPED = re.compile(
    r"\b(?:i )?(?:skipped|missed)\b|\bdidn'?t (?:do|make|manage|get to|go|practi[cs]e|study|train)\b"
    r"|\bcouldn'?t (?:do|make|go)\b|\bno time (?:today|yesterday)\b|\bdid not (?:do|make|go)\b")

def reference_in(norm: str) -> tuple[str, int | None, int | None]:
    count = None
    match = re.search(r"\b(one|two|three|four|\d)\s+(?:\w+\s+)?(?:sessions|practices|lessons|workouts)\b", norm)
    if match:
        count = COUNT_WORDS.get(match.group(1)) or int(match.group(1))
    if re.search(r"\bboth\b", norm):
        return "all", None, 2
    if re.search(r"\ball (?:my |the |of (?:them|my|the) )?(?:sessions|them)\b", norm):
        return "all", None, count
    if count and count > 1:
        return "all", None, count
    offsets = {offset for offset, _ in relative_days(norm)}
    if 0 in offsets:
        return "today", None, count
    if -1 in offsets:
        return "yesterday", None, count
    if named := weekdays_named(norm, short_words=True):
        return "weekday", named[0][0], count
    if re.search(r"\b(?:last|latest|most recent|previous) (?:session|one|practice)\b", norm):
        return "last", None, count
    return "", None, count


# A message that opens with a verb in the past, its subject left out as chat leaves it
# ("practiced!!", "went to the pool on wed", "did an extra 30 min on the bus"): what the learner
# did. Not the verbs of a state or a wish ("was wondering…", "wanted to ask…", "had a question").
_OPENS_WITH_WHAT_WAS_DONE = re.compile(
    r"^\W*(?:(?:just|finally|ok|okay|so|yay|well)\W+)*"
    r"(?!(?:was|were|had|been|thought|wanted|wondered|needed|felt|said|told|knew|understood|meant|asked|decided|"
    r"liked|loved|hated|hoped|guessed|realized|realised|noticed|heard|saw|read|forgot|missed|skipped|"
    # and not a past that is also the imperative ("put in an extra run", "set up a plan")
    r"put|set|cut|let|hit|quit)\b)"
    rf"(?:{PAST_VERB.pattern})")
# What ties a report to a session: a session word, a day, a moment of the day, an amount done, "it".
_SESSION_NOUN = r"sessions?|practices?|lessons?|workouts?"
_TIED_TO_A_SESSION = re.compile(
    rf"\b(?:it|half|all|both|{_SESSION_NOUN}|today|tonight|yesterday|last night|"
    r"this (?:morning|afternoon|evening)|\w+day'?s?|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\b|"
    r"\d+\s*(?:min|mins|minutes|h|hrs?|hours?|k|km)\b|\ban? hour\b")


def said_done(norm: str) -> bool:
    return bool(_DONE.search(norm) or _OPENS_WITH_WHAT_WAS_DONE.match(norm))


def untied_report(norm: str) -> bool:
    """Read as done only from a verb in the past opening it, with nothing that ties it to a session
    ("GOT THE JOB!!!", "practiced!!"): perhaps a session, perhaps news; checked, not written."""
    return bool(_OPENS_WITH_WHAT_WAS_DONE.match(norm) and not _DONE.search(norm) and not _SKIPPED.search(norm)
                and not _TIED_TO_A_SESSION.search(norm))


def said_skipped(norm: str) -> bool:
    return bool(_SKIPPED.search(norm))


_BARE_YES_NO = re.compile(r"(?:no+|nope|nah|yes|yep|yeah|yup|ok|okay)")


def outcome_said(norm: str) -> str:
    """Whether the session happened, from the first clause that says: "did it but honestly i wasn't
    focused" was done (the "wasn't" is about the focus); "didn't get to it, I read a bit" was not.
    A clause that says no or not, and no done word free of it, is a skip; a bare "no" or "yes"
    answers the coach's question and decides only when nothing after it does ("no, I did it")."""
    clauses = [c for c in re.split(r"[,.;!?]|\bbut\b|\bthough\b", norm) if c.strip()]
    clauses = [c for c in clauses if not _BARE_YES_NO.fullmatch(c.strip())] or clauses
    # A clause about the session says what happened to it, before one about something else ("went
    # climbing but my session on friday didn't happen").
    about_it = [c for c in clauses if re.search(rf"\b(?:{_SESSION_NOUN})\b", c)]
    for clause in about_it + [c for c in clauses if c not in about_it]:
        if said_skipped(clause):
            return "skipped"
        if said_done(clause) and not negated(clause):
            return "completed"
        if negated(clause):
            return "skipped"
    return "completed"


def parse_intent(text: str) -> Intent:
    norm = re.sub(r"\s+", " ", text.strip().lower().replace("’", "'"))
    if match := _UNDO.search(norm):
        return Intent(UNDO, cue=match.group(0).strip())
    is_question = norm.endswith("?") or bool(QUESTION_START.match(norm))
    reschedule = _RESCHEDULE.search(norm)
    if reschedule and _SESSION_WORDS.search(norm):
        reference, weekday, count = reference_in(norm)
        return Intent(RESCHEDULE, reference=reference, weekday=weekday, count=count, cue=reschedule.group(0))
    if match := _PLAN.search(norm):
        return Intent(PLAN, cue=match.group(0))
    skipped, done = _SKIPPED.search(norm), _DONE.search(norm) or _OPENS_WITH_WHAT_WAS_DONE.match(norm)
    # A report states what happened. A question ("should I skip today?", "did you log it?") or a
    # future/hypothetical ("I might skip tomorrow") is not one, whatever words it contains.
    if (skipped or done) and not is_question and not _FUTURE.search(norm):
        reference, weekday, count = reference_in(norm)
        return Intent(REPORT, outcome=outcome_said(norm), reference=reference, weekday=weekday, count=count,
                      cue=(skipped or done).group(0).strip())
    if is_question:
        return Intent(QUESTION, cue="question")
    return Intent(OTHER)


# --- answers to a question the coach asked ---------------------------------------------------


_LETTER = re.compile(r"(?<![\w'’])([a-eA-E])(?![\w'’])")
# After a capital "A", what shows it is a label and not the article ("A but at 8pm", "A i guess",
# "A, please" — not "A session on Monday").
_LABEL_A_AFTER = re.compile(r"^(?:\s*$|\s*[,.!?;:)]|"
                            r"\s+(?:but|and|or|i|it|then|please|pls|for|sounds|works|is|looks)\b)")


def _letters_named(text: str, upper: list[str]) -> list[tuple[int, int]]:
    """(position, option index) of each offered label written as a letter on its own: "B!!", "la b",
    "go with A, and …". A lower-case "a" is the article unless it is the whole message."""
    found = []
    for match in _LETTER.finditer(text):
        letter = match.group(1)
        if letter.upper() not in upper:
            continue
        if letter == "a" and text.strip(" .!?") != "a":
            continue
        if letter == "A":
            at_start = not text[:match.start()].strip() or text[:match.start()].rstrip()[-1] in ".!?"
            if at_start and not _LABEL_A_AFTER.match(text[match.end():]):
                continue
        found.append((match.start(), upper.index(letter.upper())))
    return found


def ordinal_named(norm: str) -> int | None:
    """The place an ordinal names ("the second one": 1, "the last": -1), or None. An ordinal of
    another language counts in a short reply only (vocabulary.ORDINALS_ELSEWHERE)."""
    for match in _ORDINAL.finditer(norm):
        # An ordinal names an option when it stands for one ("the second one", "first option", "the
        # last", "second pls"); one that qualifies another word ("my first sock", "last night") does not.
        if match.group(2) or not _WORD_AFTER.match(norm, match.end()) or len(norm.split()) <= 2:
            return ORDINALS[match.group(1)]
    if len(norm.split()) <= 4 and not weekdays_named(norm) and (match := _ORDINAL_ELSEWHERE.search(norm)):
        return ORDINALS_ELSEWHERE[match.group(1)]  # (not "pode ser na segunda?": that names Monday)
    return None


_ORDINAL = re.compile(rf"\b(?:the )?({'|'.join(ORDINALS)})( one| option| session)?\b")
_WORD_AFTER = re.compile(r"\s+[^\W\d_]")
_ORDINAL_ELSEWHERE = re.compile(rf"\b({'|'.join(ORDINALS_ELSEWHERE)})\b")


def pick_choice(text: str, labels: list[str], option_days: list[frozenset[int]] | None = None,
                said_days: frozenset[int] = frozenset()) -> int | None:
    """Which of the offered choices (labels "A", "B", …) the learner picked: "option B", "B!!", "the
    second one", a day only one choice has (`option_days`, against the days the message names,
    `said_days`), or "yes"/"sure" for the first (recommended) one. Two labels are a pick only when
    the learner changed their mind between them ("B. wait no, A"). None when it does not pick
    exactly one."""
    norm = text.strip().lower()
    upper = [label.upper() for label in labels]
    match = re.search(r"\boption\s*([a-e])\b", norm)
    if match and match.group(1).upper() in upper:
        return upper.index(match.group(1).upper())
    if letters := _letters_named(text, upper):
        if len({index for _, index in letters}) == 1:
            return letters[0][1]
        first, last = letters[0][0], letters[-1][0]
        between = text[first:last]
        return letters[-1][1] if CHANGE_OF_MIND.search(between) or re.search(r"(?i)\bno(?:pe)?\b", between) else None
    if (index := ordinal_named(norm)) is not None and labels:
        index = index if index >= 0 else len(labels) - 1
        return index if index < len(labels) else None  # "the third one" of two: picks none
    if option_days and said_days:
        shared = frozenset.intersection(*option_days)
        # One day said names the option that alone has it ("the saturday one"); several days name
        # an option only when they are its days: "only Tuesdays and Saturdays" against an option on
        # Tuesday, Thursday and Saturday asks for other days, and picks none.
        hits = [i for i, days in enumerate(option_days) if (days - shared) & said_days and said_days <= days
                and (len(said_days) == 1 or said_days == days)]
        if len(hits) == 1:
            return hits[0]
    if says_yes(norm) and labels:
        return 0
    return None


def report_targets(intent: Intent, candidates: list, *, tz: tzinfo, today: date) -> tuple[list, bool]:
    """(sessions the report is about, ambiguous?). A write needs an unambiguous reference: the one
    session that fits "today"/"yesterday"/"Tuesday's"/"both", or the only reportable session.
    `candidates` are sessions (with `planned_start`), newest first; `tz` is the learner's time
    zone and `today` the learner's date in it."""
    if intent.reference == "all":
        ambiguous = intent.count is not None and intent.count != len(candidates)
        return (candidates if not ambiguous else []), ambiguous or not candidates
    if not intent.reference:
        if len(candidates) <= 1:
            return candidates, False
        return [], True
    if intent.reference == "last":
        return candidates[:1], False
    def day(s):
        return s.planned_start.astimezone(tz).date()
    if intent.reference == "today":
        fits = [s for s in candidates if day(s) == today]
    elif intent.reference == "yesterday":
        fits = [s for s in candidates if (today - day(s)).days == 1]
    else:
        fits = [s for s in candidates if day(s).weekday() == intent.weekday]
    if len(fits) == 1:
        return fits, False
    if not fits and not candidates:
        return [], False  # nothing planned: an unattached practice report
    return [], True
