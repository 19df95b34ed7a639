"""What an onboarding message is: a non-answer (greeting, filler, refusal, question, off-topic),
a goal (stated with or without an intent phrase, possibly before it was asked), or a correction
of an earlier answer ("actually, my goal is …"). Pure functions: no database, no model."""

from __future__ import annotations

import re
import unicodedata

from coaching.models import OnboardingStep
from coaching.onboarding.small_talk import is_greeting, is_small_talk, strip_greeting
from coaching.onboarding.state import OnboardingAnswers
from coaching.onboarding.values import (
    CATEGORY_NAMES,
    CONFIDENCE_WITH_SCALE,
    HOURS_WITH_UNIT,
    TIME_RULES,
    has_keyword,
    map_category,
    normalise,
    parse_best_time,
    parse_category_answer,
    parse_confidence,
    parse_hours,
    says_time_amount,
    swap_name,
)
from coaching.turn.reading.vocabulary import (
    CHANGE_OF_MIND_WORDS,
    LEAD_FILLER,
    QUESTION_START,
    QUESTION_WORD,
    weekdays_named,
    without_replaced,
)


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


def is_bare_question(text: str) -> bool:
    stripped = text.strip()
    return stripped.endswith("?") or bool(QUESTION_START.match(stripped))


def is_tentative(sentence: str) -> bool:
    """A short fragment said with a question mark but no question in it ("Czech maybe?", "idk,
    maybe drawing?", "3 hours?"): the learner offers an answer and is unsure of it. It asks for no
    information — no question word, no clause opening with an auxiliary — so, where an answer is
    awaited, it is that answer, not a question."""
    stripped = sentence.strip()
    if not stripped.endswith("?"):
        return False
    if not 0 < len(re.findall(r"[\w']+", stripped)) <= 5 or QUESTION_WORD.search(stripped):
        return False
    return not any(QUESTION_START.match(clause) for clause in re.split(r"[,;:]", stripped))



# --- goals --------------------------------------------------------------------------------------
# "I want to …", "my goal is …", "help me …": the words after the cue are the goal.
_GOAL_INTENT = re.compile(
    r"(?i)\b(?:my (?:main |real |actual |new )?goal (?:is|would be|'s)(?: to)?|goal:|"
    r"i(?:'d| would) (?:really )?(?:like|love) to|"
    r"i (?:really )?(?:(?:want|need|hope|plan|mean|meant) to|wanna(?: to)?)|"
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
# Hedges in front of the answer are not part of the goal: "I'm not sure yet, maybe guitar" is the
# goal "guitar" (stored whole, the hedge became the learner's goal in the profile and the summary).
_LEAD_FILLER = re.compile(r"(?i)^\s*(?:(?:i guess|i think|well|so|um+|uh+|hmm+|idk|maybe|probably|perhaps|honestly|"
                          r"ok(?:ay)?|yeah|yes|like|basically|actually|i suppose|(?:i )?dunno|no idea|really|tbh|"
                          r"kind of|kinda|sort of|something (?:with|in|around|about|like|to do with)(?: the)?|"
                          r"i(?:'m| am|m) not (?:really |quite |totally |entirely )?sure(?: yet| really)?|"
                          r"not (?:really |quite )?sure(?: yet| really)?|i don'?t (?:really )?know(?: yet)?)"
                          r"\b[\s,.!-]*)+")
# ... and so are hedges behind it: "guitar maybe" is the goal "guitar".
_TRAIL_FILLER = re.compile(r"(?i)(?:[\s,]+(?:maybe|perhaps|probably|i guess|i think|i suppose|or something|or so|"
                           r"tbh|idk|kinda|or whatever))+\s*$")
# A message that doubts itself: with nothing more than an area in it, it names where the goal
# lies, not the goal.
_HEDGED = re.compile(r"(?i)\b(?:dunno|idk|not (?:really |quite |totally )?sure|no idea|maybe|perhaps|probably|"
                     r"i guess|i suppose|something (?:with|in|around|about|like|to do with)|kind of|kinda|sort of|"
                     r"or something|whatever)\b")
# A message that opens by changing an earlier answer ("actually, …", "sorry, …", "no — …").
CORRECTION = re.compile(rf"(?i)^\s*(?:(?:{CHANGE_OF_MIND_WORDS}|sorry|oops|no|nope|hmm|let me change|change of plan)"
                        r"\b[\s,:!.-]*)+")
# A change of mind inside one answer: "maybe 4 hours? actually no, make it 3" means 3 h, not the
# first number. The words after the last marker are the answer.
_MIND_CHANGE = re.compile(rf"(?i)\b(?:{CHANGE_OF_MIND_WORDS}|rather|make (?:it|that))\b")


def after_change_of_mind(text: str) -> str | None:
    """What follows the last change-of-mind marker of an answer, or None when there is none."""
    parts = _MIND_CHANGE.split(text)
    return parts[-1].strip(" ,.:;!?-—–") or None if len(parts) > 1 else None


_REASON_CLAUSE = re.compile(r"(?i),\s+(?=(?:my|our|i|i'm|we|we're|she|he|they|it's|there's)\s+\w+)")


_WHEN_CLAUSE = re.compile(r"(?i)\s*(?:in|at|mostly|usually|probably|maybe|ideally|after|before|early|late|"
                          r"mornings?|evenings?|nights?|afternoons?)\b")


def _without_answer_clauses(phrase: str) -> str:
    """The goal without the clauses after it that answer later questions: "learn to play the
    guitar, maybe 2 hours a day" has the goal "learn to play the guitar" (the hours are read from it
    separately). A time amount, a confidence or a time of day alone is no part of a goal; a
    frequency can be ("swim twice a week")."""
    parts = re.split(r",\s*", phrase)
    while len(parts) > 1 and (says_time_amount(parts[-1]) or CONFIDENCE_WITH_SCALE.search(parts[-1])
                              or (len(parts[-1].split()) <= 6 and _WHEN_CLAUSE.match(parts[-1])
                                  and parse_best_time(parts[-1]))):
        parts.pop()
    return ", ".join(parts)


# A goal the learner set in quotes ("change my goal to 'learn to swim' first"): the goal as they
# wrote it. A title in quotes ("play 'Clair de Lune'") is part of a goal, not one.
_QUOTED = re.compile(r"(?:^|(?<=\s))[\"'“‘]([^\"'“”‘’]+)[\"'”’](?=[\s,.!?;:]|$)")
# An adverb of manner or time right before the goal's verb ("finally finish my thesis", "seriously
# learn piano") says how much the goal matters, not what it is.
_ADVERB_BEFORE_VERB = re.compile(rf"(?i)^(?:[a-z]+ly\s+)+(?={_GOAL_VERB.pattern.removeprefix('(?i)')})")


def up_to_pictograph(phrase: str) -> str:
    """The phrase up to the first emoji or other pictograph ("finish my thesis 😅", "get decent at
    chess ♟️ my dad always beats me"): a goal is words, and in a chat a pictograph ends a sentence
    as a full stop does."""
    cut = next((i for i, ch in enumerate(phrase) if unicodedata.category(ch) in ("So", "Co")), len(phrase))
    end = cut
    while end and (unicodedata.category(phrase[end - 1]) in ("Sk", "Cf", "Mn") or phrase[end - 1].isspace()):
        end -= 1
    return phrase[:end]


def _clean_goal(phrase: str) -> str:
    # A goal never opens with a copula: "what I really want is to learn guitar" wants "learn guitar".
    phrase = re.sub(r"(?i)^\s*(?:is|was|would be)\s+(?:to\s+)?", "", _LEAD_FILLER.sub("", phrase.strip()))
    phrase = _ADVERB_BEFORE_VERB.sub("", phrase)
    # The reason after "because", in its shortened spellings too ("bc", "b/c", "cuz"), is no part of it.
    phrase = re.split(r"(?<=[a-z0-9)])[.!?;]\s|[.!?;]+$|\s+(?:but|because|bc|b/c|cuz|coz|since|though|instead of)\s",
                      up_to_pictograph(phrase), maxsplit=1)[0]
    if (quoted := _QUOTED.search(phrase)) and _GOAL_VERB.match(quoted.group(1)):
        phrase = quoted.group(1)
    # The change of mind is not part of the goal: "actually I want to learn Spanish instead" was
    # stored as "learn Spanish instead", and "I'd rather learn Italian instead, my partner is from
    # Rome" as "learn Italian instead, my partner is from Rome".
    phrase = re.sub(r"(?i)[\s,]+(?:instead|rather|after all)\b(?:\s*[,;:—–-].*)?$", "", phrase.strip(" ,.-—–!?"))
    # Nor is the reason given after a comma as a clause of its own ("…, my partner is from Rome",
    # "…, I have family there"); a list inside the goal ("read, write and speak Italian") stays.
    phrase = _REASON_CLAUSE.split(phrase, maxsplit=1)[0]
    phrase = _without_answer_clauses(phrase)
    phrase = _TRAIL_FILLER.sub("", phrase.strip(" ,.-—–!?"))
    return re.sub(r"\s+", " ", phrase).strip(" ,.-—–!?")[:300]


# A goal read from a sentence about the learner ("i've been wanting to get better at chess").
_FIRST_PERSON_LEAD = re.compile(r"(?i)^(?:i|im|ive|me)\b")  # "i", "i'm", "i've been", …: all start with the word "i"


def goal_from_its_verb(goal: str) -> str:
    """The goal from its verb of learning or doing on, when the words before it are the learner
    talking about themselves: what the coach says back when it asks whether it understood."""
    verb = _GOAL_VERB.search(goal)
    if verb and verb.start() > 0 and _FIRST_PERSON_LEAD.match(goal):
        return goal[verb.start():].strip()
    return goal


def answers_another_step(text: str) -> bool:
    """A short message that answers a later question, not the goal one: "2 hours", "mornings",
    "7/10", "5": at the goal step, "2 hours" is not the goal "2 hours"."""
    norm = normalise(text)
    short = len(norm.split()) <= 4
    return bool(re.fullmatch(r"\d+(?:[.,]\d+)?", norm) or (short and HOURS_WITH_UNIT.search(text))
                or (short and CONFIDENCE_WITH_SCALE.search(text))
                or (len(norm.split()) <= 3 and parse_best_time(text) and not _GOAL_VERB.search(text)))


# Category words that also make a goal of their own ("work on my exam", "study") are left to the
# other rules; "other" and "something else" are answers to the area question, never a goal.
_NOT_AN_AREA = frozenset({"work", "study", "exam"})


def area_only(goal: str) -> str | None:
    """The area a would-be goal names when it names nothing more: "music", "sports", "something
    with languages" say where the goal lies, not what the learner wants to do there. A trial stored
    "dunno really, something with music maybe" as the goal "really, something with music maybe"."""
    content = [w for w in re.findall(r"[a-z/]+", goal.lower()) if w not in _GENERIC]
    if content and all(w in CATEGORY_NAMES and w not in _NOT_AN_AREA for w in content):
        return CATEGORY_NAMES[content[0]]
    return None


def area_not_goal(goal: str, said: str = "") -> str | None:
    """The area when `goal`, read from `said`, is an area and not a goal: an area alone with no
    learning verb ("music"), or an area in a message that doubts itself ("something with art, I
    guess"). The gate's rule (extract_goal, goal_correction) and the evaluation's check on stored goals."""
    area = area_only(goal)
    return area if area and (_HEDGED.search(said or goal) or not _GOAL_VERB.search(goal)) else None



def _substantive(goal: str) -> bool:
    content = [w for w in re.findall(r"[a-z0-9\u00e0-\u024f]+", goal.lower()) if w not in _GENERIC]
    return any(len(w) >= 3 or w.isdigit() for w in content)


def extract_goal(text: str) -> tuple[str | None, str]:
    """(goal, "") or (None, why not). Reads a goal from a message that may open with a greeting or
    small talk. A message without a learning verb or intent phrase is still a goal when it is a
    short phrase naming something ("pottery", "public speaking") or maps to a category. An area
    alone ("music", "something with music maybe", "learn music, I guess") is not a goal: why is
    "area_only:<category>", and the gate asks what the learner wants to do there."""
    body = strip_greeting(text)
    # "hey there" is a greeting as a whole; stripped of "hey", its "there" read as filler and the
    # learner's hello got no hello back.
    kind = "greeting" if not body or is_greeting(text) else non_answer_kind(body)
    if kind in ("greeting", "filler", "refusal"):
        return None, kind
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", body) if s.strip()]
    vague = False
    judged: set[str] = set()
    areas: list[str] = []
    other_step = False
    for sentence in sentences:
        match = _GOAL_INTENT.search(sentence)
        if match:
            judged.add(sentence)
            goal = _clean_goal(match.group(1))
            if goal and _HEDGED.search(sentence) and (area := area_only(goal)):
                areas.append(area)  # "I want to do something with music, I guess"
                continue
            if goal and _substantive(goal) and not non_answer_kind(goal):
                return goal, ""
            vague = True
    for sentence in sentences:
        if sentence in judged or non_answer_kind(sentence) or _OFF_TOPIC.search(sentence):
            continue
        cleaned = _clean_goal(sentence)
        if not cleaned or not _substantive(cleaned):
            continue
        if answers_another_step(cleaned):
            other_step = True
            continue
        if area := area_not_goal(cleaned, sentence):
            areas.append(area)
            continue
        if _GOAL_VERB.search(cleaned) or map_category(cleaned):
            if is_bare_question(sentence) and not is_tentative(sentence) and not map_category(cleaned):
                continue
            return cleaned, ""
    if areas:
        return None, f"area_only:{areas[0]}"
    if other_step or answers_another_step(body):
        return None, "other_step"
    if len(sentences) == 1 and not vague and kind is None:
        cleaned = _clean_goal(body)
        if (cleaned and len(cleaned.split()) <= 6 and _substantive(cleaned)
                and not (is_bare_question(body) and not is_tentative(body))
                and not re.match(r"(?i)^(?:i|i'm|im|i am|it|it's|this|that|we|you)\b", cleaned)):
            return cleaned, ""
    if kind in ("off_topic", "about"):
        return None, kind
    if vague:
        return None, "vague_goal"
    if any(is_bare_question(s) and not is_tentative(s) for s in sentences):
        return None, "question"
    if any(is_tentative(s) for s in sentences):
        # "honestly not sure yet... something with my hands maybe?": an answer offered too unsure to
        # be a goal, not a question to put off.
        return None, "vague_goal"
    return None, "no_goal"


_ABOUT_PRACTICE = re.compile(r"(?i)^(?:practi[cs]e|practi[cs]ing|study|studying|train|training|do (?:it|this|that)|"
                             r"work on it)\b")


def goal_correction(text: str) -> str | None:
    """'actually, my goal is to learn German', 'no — I want to learn the piano', 'change my goal to …'."""
    corrected = CORRECTION.match(text)
    body = text[corrected.end():] if corrected else text
    match = re.search(r"(?i)\b(?:my (?:main |real |actual |new )?goal (?:is|would be|'s)(?: to)?|"
                      r"change (?:my|the) goal to|set my goal to|i(?:'d| would) rather|i meant)\s+(.+)", body)
    if match is None and corrected:
        match = re.search(r"(?i)^(?:i (?:really )?(?:want to|wanna)|i(?:'d| would) like to)\s+(.+)", body.strip())
    if match is None:
        return None
    goal = _clean_goal(match.group(1))
    if not goal or not _substantive(goal) or non_answer_kind(goal) or area_not_goal(goal, body):
        return None
    # "sorry, I meant mornings" / "I meant 5 hours" corrects another answer, not the goal; so does
    # "I'd rather practise after work" (when to practise the goal the learner has: time_correction).
    # So does "I'd rather do sunday's in the evening": a day and a time of day say when, not what.
    if (_ABOUT_PRACTICE.match(goal) or weekdays_named(goal)) and parse_best_time(goal):
        return None
    norm = normalise(goal)
    if (norm in CATEGORY_NAMES or HOURS_WITH_UNIT.search(goal) or CONFIDENCE_WITH_SCALE.search(goal)
            or (len(norm.split()) <= 3 and any(has_keyword(norm, k) for _, ks in TIME_RULES for k in ks))):
        return None
    return goal


# A profile value changed by its name: "switch my goal to passing DELE B1", "cut my hours down to 2
# a week", "new goal: learn blender", "change the category to career", "my best time is actually
# late night now". The names are the profile's own fields (a closed class); the value after them is
# read by the field's own parser, never taken as said. A question weighs a change ("should I lower
# my hours to 2?"), except a request put as one ("can we change my time to evenings?").
_FIELD_NAMES = {
    "primary_goal": r"goal",
    "goal_category": r"category|area",
    "weekly_hours": r"(?:weekly\s+)?hours(?:\s+(?:a|per)\s+week)?",
    "best_time": r"best\s+time|time\s+of\s+day|usual\s+time|time",
    "confidence": r"confidence(?:\s+score)?|confidence\s+level",
}
_FIELD = "(?P<field>" + "|".join(_FIELD_NAMES.values()) + ")"
_CHANGE_VERB = r"change|switch|set|update|make|cut|lower|raise|bump|reduce|increase|drop|put|turn|move"
_NAMED_CHANGES = (
    # "switch my goal to …", "cut my hours down to 2 a week", "change the category to career"
    re.compile(rf"(?i)\b(?:{_CHANGE_VERB})\s+(?:my|the|our)\s+(?:new\s+)?{_FIELD}\s+(?:(?:down|up|back)\s+)?"
               r"(?:to|into|as)\s+(?P<value>.+)"),
    # "my confidence dropped to a 3", "hours went down to 2 a week": the field as the subject of the change
    re.compile(rf"(?i)(?:^|\b(?:my|our)\s+){_FIELD}\s+(?:has\s+|have\s+|'s\s+|is\s+|are\s+)?"
               r"(?:dropped|fallen|fell|gone|went|rose|risen|jumped|sunk|sank|changed|grown|grew|down|up)\s+"
               r"(?:(?:down|up|back)\s+)?to\s+(?P<value>.+)"),
    # "new goal: learn blender for 3d art"
    re.compile(rf"(?i)\bnew\s+{_FIELD}\s*(?:is\b|[:=–-])\s*(?P<value>.+)"),
    # "my best time is actually late night now" (said as new: "my goal is …" alone is goal_correction's)
    re.compile(rf"(?i)\bmy\s+{_FIELD}\s+(?:is|are|'s|should be)\s+(?:(?:now|actually|really|more like)\s+)+"
               r"(?P<value>.+)"),
)
_REQUEST_AS_QUESTION = re.compile(rf"(?i)^\W*{LEAD_FILLER}(?:can|could|may)\s+(?:i|we|you|u)\b")


def named_change(text: str) -> dict:
    """The profile value a message changes by naming it (`{field: value}`), or {}: the value read by
    the field's parser from the words after the name, without any it says it replaces."""
    match = next((m for pattern in _NAMED_CHANGES if (m := pattern.search(text))), None)
    if match is None or (text.rstrip().endswith("?") and not _REQUEST_AS_QUESTION.match(text)):
        return {}
    field = next(name for name, words in _FIELD_NAMES.items() if re.fullmatch(words, match.group("field"), re.I))
    said = match.group("value")
    if field == "primary_goal":
        goal = _clean_goal(said)  # which cuts "instead of …" and what follows
        ok = goal and _substantive(goal) and not non_answer_kind(goal) and not area_not_goal(goal, said)
        return {field: goal} if ok else {}
    value = {"goal_category": parse_category_answer, "weekly_hours": parse_hours, "best_time": parse_best_time,
             "confidence": parse_confidence}[field](without_replaced(said))
    return {} if value in (None, "") else {field: value}


# A change of the best time after onboarding names a time of day in the same clause as one of
# these ("actually evenings suit me better now", "I'd prefer mornings from now on"). A preference
# alone is not a change: "I prefer studying Portuguese in the evening after work" is news for the
# coach (and a fact for memory), not a profile edit.
_TIME_CHANGE = re.compile(r"(?i)\b(?:suits?|suited|works? (?:better|best)|(?:is|are) better|better for me|"
                              r"rather|instead|switch(?:ed)?|change|from now on)\b")
_CLAUSES = re.compile(r"(?i)[,.;!?]|\bbut\b|\band\b|\bso\b")


def time_correction(text: str) -> str | None:
    """The new best time in 'actually evenings suit me better now', 'I've stopped practising in the
    mornings, evenings work better now' (the clause with the change word decides, not the
    first time named), 'I'd rather practise after work'; None for a message that only mentions a
    time ("I practised this morning"). The router asks only after onboarding, and not for reports,
    reschedule requests or questions."""
    if corrected := CORRECTION.match(text):
        rest = text[corrected.end():]
        if len(rest.split()) <= 4 and (when := parse_best_time(rest)):
            return when  # "sorry, I meant mornings", "actually, evenings"
    for clause in _CLAUSES.split(text):
        if _TIME_CHANGE.search(clause) and (when := parse_best_time(clause)):
            return when
    return None


# "actually, make it Italian", "no, switch to piano", "sorry, change it to Python": the goal kept,
# one name in it changed (not a new goal, and not an answer to the question pending).
_SWAP = re.compile(r"(?i)^(?:make (?:it|that)|change (?:it|that) to|switch (?:it |that )?to|let'?s (?:do|make it)|"
                   r"how about|(?:i'?d )?rather do)\s+(.+)")


def goal_swap(stored: str, text: str) -> str | None:
    """The goal after "actually, make it <X>" at a later step: the stored goal with X in place of the
    name of X's kind it holds ("get better at Spanish so …" -> "get better at Italian so …"), or X
    as the new goal when X is a goal of its own. None when X answers a step ("make it 3", "make it
    evenings") or names only an area."""
    corrected = CORRECTION.match(text)
    if not corrected or not stored:
        return None
    match = _SWAP.match(text[corrected.end():].strip())
    new = _clean_goal(match.group(1)) if match else ""
    if (not new or normalise(new) in CATEGORY_NAMES or parse_hours(new) is not None or parse_best_time(new)
            or parse_confidence(new) is not None):
        return None
    if swapped := swap_name(stored, new):
        return swapped
    return goal_correction(f"actually my goal is {new}") if _GOAL_VERB.search(new) or map_category(new) else None


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
        # Only a goal that names a skill ("play guitar", "pottery"), not "12" at the confidence step;
        # at the area question, an area named without a goal verb answers it ("the second one,
        # programming").
        named = goal and (_GOAL_VERB.search(goal) or (map_category(goal) and answers.step != OnboardingStep.CATEGORY))
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
