"""Deterministic reply and profile checks shared by the output guard (coaching/turn/guard.py) and the
evaluation checks (evaluation/checks.py), so the guard blocks exactly what evaluation counts.

Pure functions: text in, a short reason (or None) out. No model. Every pattern below comes from a
defect seen with the default 0.5B model: replies narrating the learner in the third person,
echoing the learner's message, refusing ordinary coaching messages, the same text coming back
turn after turn, and greetings stored as profile values (small talk is recognised by the
onboarding gate's own rules, coaching/onboarding/small_talk.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from coaching.onboarding.answers import area_not_goal
from coaching.onboarding.small_talk import is_small_talk
from coaching.onboarding.values import parse_best_time, parse_category_answer
from coaching.turn.reading.vocabulary import NUMBER_WORDS

_WORD = re.compile(r"[a-z0-9][a-z0-9'’]*")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


# --- third person ---------------------------------------------------------------------------
# A coach talks TO the learner. "The learner missed two sessions", "the user's goal" is the model
# narrating its prompt. "They"/"their" alone is not flagged: it is too often about someone else.
_THIRD_PERSON = re.compile(
    r"(?i)\b(?:the|this|our) (?:learner|user|student|client)(?:'s|’s|s)?\b"
    r"|\blearner(?:'s|’s)? (?:goal|profile|reported|said|says|missed|skipped|wants|has|is)\b")


def _first_match(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(0) if match else None


def third_person(text: str) -> str | None:
    return _first_match(_THIRD_PERSON, text)


# --- parroting ------------------------------------------------------------------------------
PARROT_MIN_WORDS = 8


def longest_shared_run(a_text: str, b_text: str) -> int:
    """Length in words of the longest word sequence of `a_text` that appears verbatim in `b_text`."""
    a, b = words(a_text), words(b_text)
    best = 0
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def parrot(reply: str, learner_text: str) -> str | None:
    """The reply repeats the learner's message back: a long verbatim run (≥ 8 words), or most of a
    shorter message (≥ 5 words and ≥ 80 % of it) making up most of the reply. Quoting two or three
    of the learner's words ("400 m without stopping!") is reflection, not parroting."""
    if not reply.strip() or not learner_text.strip():
        return None
    run = longest_shared_run(reply, learner_text)
    n_learner, n_reply = len(words(learner_text)), len(words(reply))
    if run >= PARROT_MIN_WORDS:
        return f"{run} words of the learner's message repeated"
    if run >= 5 and run >= 0.8 * n_learner and run >= 0.5 * n_reply:
        return f"the learner's message repeated ({run} of {n_learner} words)"
    return None


# --- code's text and the notes in the model's words ---------------------------------------------
# Shared by the guard's leak check and evaluation's scaffold check (one pattern, two readers).
# Code's own lines in the model's mouth: options, write confirmations, the undo offer. Only code
# offers options and states writes (it stores what it offered); a model copying "Option A: …"
# from an earlier reply offers something no later "option A" can resolve. Seen trying the API.
CODE_TEMPLATE = re.compile(r"(?im)^\s*option [a-c]:|reply “option|\bsay “undo”|^\s*logged:|\bi'll schedule it\b"
                           r"|\bnot linked to a planned session\b|\byour notes\b")
# The profile line of the notes, recited: "goal: … (music); 2 h/week; best time: evening; …".
PROFILE_LINE = re.compile(r"(?i)\d h/week\b|;\s*best time:|\bconfidence \d+/10;")
# The coach speaking as a model or a system rather than a coach: about its prompt or instructions,
# or in a "mode" a message or a stored fact told it it was in. Text in the learner's memory is data;
# a reply that takes it up as a change of role has followed an injected instruction.
ROLE_CLAIM = re.compile(r"(?i)\bas an ai\b"
                        r"|\b(?:i am|i'm) (?:a|an) (?:ai|language model|large language model)\b"
                        r"|\bmy (?:system )?(?:prompt|instructions|programming)\b"
                        r"|\b(?:admin|administrator|developer|debug|maintenance|root|god|jailbreak|unrestricted)"
                        r" mode\b|\bsystem override\b")


# --- refusals -------------------------------------------------------------------------------
_REFUSAL = re.compile(
    r"(?i)\b(?:i'?m|i am) (?:sorry|afraid),? but (?:i|we) (?:can(?:'|no)t|am unable|won'?t|am not able)"
    r"|\bi (?:can(?:'|no)t|am unable to|am not able to|won'?t) (?:assist|help|provide|comply|do that|answer that|"
    r"support|engage|fulfil|fulfill)"
    r"|\bi(?:'m| am) (?:unable|not able) to (?:assist|help|provide|answer)"
    r"|\bi (?:don'?t|do not) know how to (?:assist|help)"
    r"|\b(?:that|this) (?:request )?(?:is|goes) (?:outside|beyond) (?:my|what i)"
    r"|\bas an ai\b|\bi(?:'m| am) (?:just )?an? (?:ai|language model)\b")


def refusal(text: str) -> str | None:
    return _first_match(_REFUSAL, text)


# --- loops ----------------------------------------------------------------------------------
LOOP_REPEATS = 3


def _loop_key(text: str) -> str:
    return " ".join(words(text))


def loop(reply: str, previous_replies: Iterable[str]) -> str | None:
    """The same reply text at least three times in one conversation (this one included)."""
    key = _loop_key(reply)
    if not key:
        return None
    count = 1 + sum(1 for p in previous_replies if _loop_key(p) == key)
    return f"same reply {count} times in the conversation" if count >= LOOP_REPEATS else None


_SALUTATION = re.compile(
    r"(?i)^\W*(?:hi|hello|hey|greetings|good (?:morning|afternoon|evening|night|day))\b[^.!?]*[.!?]?")


# An answer to thanks: "You're welcome! Duolingo is a great way to learn…" answered "I did 20
# minutes of Duolingo this morning, but I get distracted by my phone a lot".
_WELCOME = re.compile(r"(?i)^\W*(?:you'?re (?:very |so )?welcome|you are welcome|no problem|my pleasure|"
                      r"anytime|don'?t mention it)\b[^.!?]*[.!?]?")
_THANKS = re.compile(r"(?i)\b(?:thanks?|thank you|thx|ty|cheers|appreciate)\b")


def unprompted_greeting(reply: str, learner_text: str) -> str | None:
    """A reply that opens with a pleasantry the learner's message did not call for: a salutation
    when the learner did not greet (the small model reads a bare answer as a greeting: "evenings" →
    "Good evening!"), or "You're welcome" when the learner did not thank."""
    text = (reply or "").replace("’", "'")
    if (match := _WELCOME.match(text)) and not _THANKS.search(learner_text or ""):
        return f"answers thanks the learner did not give: {match.group(0).strip()[:60]!r}"
    match = _SALUTATION.match(text)
    if not match or _SALUTATION.match(learner_text or ""):
        return None
    return f"greets the learner unprompted: {match.group(0).strip()[:60]!r}"


# --- profile values -------------------------------------------------------------------------
def goal_is_greeting(goal: str) -> str | None:
    """A stored goal that is a greeting, filler or pleasantry (the gate's post-launch defect), or an
    area in the learner's hedge ("really, something with music maybe", stored in a later trial)."""
    if goal and is_small_talk(goal):
        return f"goal {goal!r} is small talk, not a goal"
    if goal and area_not_goal(goal):
        return f"goal {goal!r} names an area, not a goal"
    return None


# Values the gate may choose itself, and says so to the learner (after two unmatched answers).
GATE_DEFAULTS = {"goal_category": {"other"}, "best_time": {"flexible"}}


def _numbers_in(text: str) -> set[float]:
    found = {float(n.replace(",", ".")) for n in re.findall(r"\d+(?:[.,]\d+)?", text)}
    found |= {float(v) for w, v in NUMBER_WORDS.items() if v and re.search(rf"(?i)\b{w}\b", text)}
    # minutes → hours, "and a half"
    for m in re.findall(r"(?i)(\d+)\s*(?:min|mins|minutes)\b", text):
        found |= {round(int(m) / 60 * 2) / 2, int(m) / 60}  # rounded as stored; exact, to multiply
    if re.search(r"(?i)\band a half\b", text):
        found |= {n + 0.5 for n in list(found)}
    # A weekly total the learner gave per day or per occasion with a count ("an hour a day" is 7 a
    # week, "30 minutes 4 times a week" 2): read here on its own, not with the gate's parser.
    if re.search(r"(?i)\ban hour\b", text):
        found.add(1.0)
    if re.search(r"(?i)\bhalf an hour\b", text):
        found.add(0.5)
    if re.search(r"(?i)\b(?:a|per|each|every)\s*day\b|\bdaily\b", text):
        found |= {n * 7 for n in list(found)}
    elif re.search(r"(?i)\bweekdays?\b", text):
        found |= {n * 5 for n in list(found)}
    elif re.search(r"(?i)\b(?:times|x|evenings|mornings|nights|sessions|days)\s*(?:a|per|each|every)\s*week\b|"
                   r"\b(?:once|twice)\b", text):
        counts = found | {1.0, 2.0} if re.search(r"(?i)\b(?:once|twice)\b", text) else found
        found |= {a * b for a in counts for b in found}
    return found


def values_never_given(updates: Mapping[str, Any], learner_texts: Iterable[str]) -> list[str]:
    """Profile values that nothing the learner wrote supports. Goals must share content words with
    a learner message; numbers must appear in one; the category and time of day must be one the
    rules can read from the learner's words, or a default the gate announced."""
    texts = [t for t in learner_texts if t]
    joined = "\n".join(texts).lower()
    bad: list[str] = []
    goal = str(updates.get("primary_goal") or "")
    if goal:
        if goal_is_greeting(goal):
            bad.append(f"primary_goal={goal!r} (small talk)")
        else:
            content = [w for w in words(goal) if len(w) > 2]
            if content and not any(w in words(joined) for w in content):
                bad.append(f"primary_goal={goal!r} (not in the learner's words)")
    for key in ("weekly_hours", "confidence"):
        value = updates.get(key)
        if value not in (None, ""):
            number = float(value)
            numbers = set().union(*(_numbers_in(t) for t in texts)) if texts else set()
            if number not in numbers and not any(abs(number - n) <= 0.5 for n in numbers):
                bad.append(f"{key}={value} (no such number in the learner's words)")
    for key in ("goal_category", "best_time"):
        value = str(updates.get(key) or "")
        if value and value not in GATE_DEFAULTS[key] and not _supported(key, value, texts, goal):
            bad.append(f"{key}={value!r} (not readable from the learner's words)")
    return bad


def _supported(key: str, value: str, texts: list[str], goal: str) -> bool:
    if key == "goal_category":
        return any(parse_category_answer(t) == value for t in [*texts, goal])
    return any(parse_best_time(t) == value for t in texts)


# --- copying the prompt's example / speaking as the learner -----------------------------------
# The 0.5B model copies the few-shot exemplar's facts into a real reply ("Three hours a week around
# the kids is a real commitment." to a learner who never mentioned children), and slips into the
# learner's voice ("Evening time is a crucial part of my life."). Both are checked in code.
_FUNCTION_WORDS = frozenset({
    "the", "a", "an", "and", "or", "but", "so", "to", "of", "in", "on", "at", "for", "with", "about", "from", "by",
    "it", "its", "it's", "this", "that", "these", "those", "is", "are", "was", "were", "be", "been", "being", "am",
    "do", "does", "did", "have", "has", "had", "i", "i'm", "i've", "i'd", "me", "my", "you", "you're", "your",
    "yours", "we", "our", "they", "their", "them", "he", "she", "his", "her", "what", "which", "who", "when",
    "where", "why", "how", "not", "no", "yes", "can", "could", "would", "should", "will", "just", "really", "very",
    "too", "also", "then", "than", "there", "here", "some", "any", "all", "more", "most", "much", "many", "one",
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "hour", "hours", "week", "weeks", "day",
    "days", "time",
})
# A coach's own vocabulary: the chat exemplar's "practice" or "skipped" in a reply is ordinary
# coaching, not a copied fact (unlike "kids", "yesterday", "tired").
_COACHING_WORDS = frozenset({
    "practice", "practise", "practicing", "practising", "session", "goal", "plan", "learn", "learning", "study",
    "progress", "next", "today", "tomorrow", "skip", "skipped", "missed", "miss", "rest", "break", "start", "step",
    "try", "keep", "going", "good", "great", "nice", "happens", "easier", "feel", "make", "would", "help",
})
_FUNCTION_STEMS = (frozenset(w.replace("'", "") for w in _FUNCTION_WORDS | _COACHING_WORDS)
                   | {"thats", "whats", "lets", "dont"})
EXAMPLE_RUN_WORDS = 6


def _stem(word: str) -> str:
    word = word.replace("'", "")
    return word[:-1] if len(word) > 4 and word.endswith("s") else word


def example_copy(reply: str, examples: Iterable[tuple[str, str]], allowed_texts: Iterable[str]) -> str | None:
    """The reply carries what the prompt's example exchange(s) said and nobody in this conversation
    did: a content word of the example's learner message ("kids") that no allowed text (the
    learner's messages, the goal, the coach's question) contains, or a run of ≥ 6 words of the
    example's coach reply."""
    allowed = {_stem(w) for t in allowed_texts for w in words(t)}
    reply_words = words(reply)
    for user, assistant in examples:
        facts = {_stem(w) for w in words(user) if len(w) >= 3 and _stem(w) not in _FUNCTION_STEMS}
        copied = [w for w in reply_words if _stem(w) in facts and _stem(w) not in allowed]
        if copied:
            return f"copies {copied[0]!r} from the prompt's example"
        run = longest_shared_run(reply, assistant)
        if run >= EXAMPLE_RUN_WORDS:
            return f"{run} words of the prompt's example reply copied"
    return None


# First person about the learner's own life, in the coach's voice: the coach has no evenings, kids
# or goal. "In my experience" / "my suggestion" are the coach's own and are not matched.
_COACH_AS_LEARNER = re.compile(
    r"(?i)\bmy (?:own |main |daily |busy |whole )?(?:life|lives|goals?|evenings?|mornings?|afternoons?|nights?|"
    r"kids|children|family|schedule|routine|week|weekends?|job|work|studies|practice|progress|hobby|hobbies|"
    r"partner|wife|husband|free time|spare time|learning|lessons?|sessions?|guitar|confidence|motivation)\b"
    r"|\bmy (?:language|sleep|diet|training|workouts?|races?|marathon|skills?|lessons?|song|songs)\b"
    r"|\bmy (?:last|first|best|next|latest) (?:race|run|swim|lesson|class|game|song|match|exam|test|attempt)\b"
    r"|\bi (?:want|need|hope|plan|would like|'d like) to (?:learn|get better|improve|practi[cs]e|study|play|sing|"
    r"swim|run|speak|cook|bake|draw|paint|write|read|pass|finish|grow|train)\b"
    r"|\bi(?:'m| am) (?:learning|studying|practi[cs]ing|working on my|doing this (?:again )?because)\b"
    r"|\bi'?ll practi[cs]e\b|\bit took me\b|\b(?:a big |a real )?challenge for me\b"
    # "First, I should focus on improving my Italian language skills."
    r"|\bi should (?:focus on|practi[cs]e|study|work on|improve|learn|start with|spend)\b")


# What the learner called theirs ("around my night shifts"): the word after "my". Words a coach
# says of its own in any conversation ("my best", "my suggestion") are not taken.
_LEARNER_OWNS = re.compile(r"(?i)\bmy ([a-z][a-z'-]*)")
_COACH_OWN_WORDS = frozenset({
    "own", "best", "bad", "pleasure", "apologies", "mistake", "guess", "point", "suggestion", "advice",
    "view", "opinion", "experience", "thoughts", "take", "understanding", "question", "goodness", "god",
    "gosh", "word", "job", "role", "turn", "answer", "reply", "recommendation", "idea", "ideas"})


# Words of a goal that say how or why, not what: "my better" or "my talk" is no claim on a goal.
_GOAL_FRAME_WORDS = frozenset({
    "get", "getting", "better", "learn", "learning", "want", "with", "that", "this", "from", "have", "make", "more",
    "can", "could", "talk", "pass", "improve", "able", "finally", "properly", "really", "start", "again", "back",
    "into", "some", "well", "good", "like", "would", "so", "for", "and", "the", "to", "my", "a", "an", "of", "in",
    "on", "at", "be", "do", "go", "how"})


def coach_as_learner(text: str, learner_text: str = "", goal: str = "") -> str | None:
    """The coach speaking as the learner: the fixed list above, and "my"/"our" before what the
    learner called theirs, in this message or in their goal. A fixed list cannot know a learner's
    life: "Let's plan around our night shifts" answering "let's plan around my night shifts", or
    "I should focus on improving my Italian language skills" answering "what should I focus on
    first?" from a learner whose goal is Italian."""
    if hit := _first_match(_COACH_AS_LEARNER, text):
        return hit
    reply = text.replace("’", "'")
    owned_words = set(_LEARNER_OWNS.findall(learner_text.replace("’", "'").lower()))
    owned_words |= {w for w in re.findall(r"[a-z][a-z'-]+", goal.lower()) if len(w) > 2} - _GOAL_FRAME_WORDS
    for owned in sorted(owned_words - _COACH_OWN_WORDS):
        if match := re.search(rf"(?i)\b(?:my|our) {re.escape(owned)}\b", reply):
            return match.group(0)
    return None


# --- asking for what the coach already knows ---------------------------------------------------
# Seen on the chat page: a learner whose goal was stored ("learn to swim freestyle") was asked
# "What's your goal?" in three replies running. The goal is in the notes of every call.
_ASKS_GOAL = re.compile(
    r"(?i)\bwhat(?:'s| is| are) your (?:main |learning |current |actual )?goals?\b"
    r"|\bwhat (?:would you like|do you want|are you hoping) to (?:learn|work on|achieve|get better at)\b"
    r"|\btell me (?:about |more about )?(?:your goal|what you want to learn)\b")


def asks_known_goal(text: str, known_goal: str) -> str | None:
    """The reply asks for the learner's goal although it is known (stored at onboarding)."""
    return _first_match(_ASKS_GOAL, text) if known_goal.strip() else None


# --- asking the learner for the coach's advice ------------------------------------------------
# Seen on the chat page: "Morning is the perfect time to start your training. What are some tips
# for getting started with freestyle?" The small model slips into the asker's role and asks the
# learner for tips, the coach's job. Asking what works FOR THEM is coaching ("What helped you last
# week?"), and so is "what advice would you give yourself / a friend" (a reflection technique):
# neither is matched.
_ASKS_FOR_ADVICE = re.compile(
    r"(?i)\bwhat (?:are|were|'re) (?:some|a few|any|the|your)(?: good| best| useful| helpful| top| main)?"
    r" (?:tips|advice|suggestions|recommendations|tricks|resources)\b"
    r"|\b(?:do|can|could|would) you (?:have|give|share|offer|suggest|recommend|provide)(?: me| us)?"
    r"(?: any| some| a few)?(?: good| useful)? (?:tips|advice|suggestions|recommendations|tricks)\b"
    r"|\bwhat (?:tips|advice|suggestions|recommendations) (?:do|would|can|could) you (?:have|give|share|offer|suggest)"
    r"(?! (?:to )?(?:yourself|a friend|someone in your))"
    r"|\bany (?:tips|advice|suggestions|recommendations)(?: for me)?\s*\?")


def asks_for_advice(text: str) -> str | None:
    """The coach asks the learner for tips or advice, as if the learner were the coach."""
    return _first_match(_ASKS_FOR_ADVICE, text)


# --- announcing content instead of giving it ------------------------------------------------
# Seen through the API with the plain-text grammar: "give me a complete guide to learning Spanish"
# → "Sure! Here's a complete guide to learning Spanish … This will cover everything from
# pronunciation, vocabulary, grammar, and speaking techniques." — a promise, and then the reply
# ends (3 short sentences, a token budget). A chat reply gives its two or three best points.
_ANNOUNCES = re.compile(
    r"(?i)\bhere(?:['’]s| is) (?:a|an|the|your|my)(?: [\w-]+,?){0,3} (?:guide|list|overview|breakdown|essay|"
    r"article|outline|summary)\b(?=[^:]*(?:[.!]|$))"
    r"|\bthis (?:guide|list|overview) (?:will|should) (?:cover|help|include|walk)\b"
    r"|\bwill cover (?:everything|all)\b")


def announces_content(text: str) -> str | None:
    """The reply announces a guide or a list instead of giving its points."""
    return _first_match(_ANNOUNCES, text)


# --- a sentence repeated from the coach's last replies ----------------------------------------
# The loop check needs the same whole reply three times; the 0.5B model instead repeats one
# question turn after turn inside otherwise new replies ("What would make learning this a real
# challenge?" → "What would make moving these sessions a real challenge?"). Near-verbatim: the
# same first 5 words, the same first and last 3 words, or ≥ 75 % of the words shared.
# Compared with every coach reply the model was shown: its short-term history
# (coaching.selectors.HISTORY_LIMIT messages) can hold up to that many. With the last two only,
# a check-in reply copied the onboarding summary three replies back ("You're all set: …").
REPEAT_LOOKBACK = 6


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?…])\s+|\n+", text) if s.strip()]


def _near_same(a: list[str], b: list[str]) -> bool:
    if len(a) >= 5 and a[:5] == b[:5]:
        return True
    if min(len(a), len(b)) >= 6 and a[:3] == b[:3] and a[-3:] == b[-3:]:
        return True
    if min(len(a), len(b)) >= 4:
        sa, sb = set(a), set(b)
        return len(sa & sb) / len(sa | sb) >= 0.75
    return False


def repeated_sentences(reply: str, previous_replies: Iterable[str]) -> list[str]:
    """Sentences of `reply` that near-repeat a sentence of the coach's last REPEAT_LOOKBACK replies."""
    earlier = [words(s) for p in list(previous_replies)[:REPEAT_LOOKBACK] for s in split_sentences(p)]
    return [s for s in split_sentences(reply) if any(_near_same(words(s), e) for e in earlier)]


# --- a reply ending on a list opener ------------------------------------------------------------
# "…here are some tips to help you stay motivated:\n1." — the reply was cut (a later sentence
# failed, or max tokens) right after it promised a list. A reply never ends on ":" or a bare
# list marker ("1.", "-", "•"), on its own line or straight after a colon or a sentence ("… well. 2.").
_LIST_MARKER = r"(?:\d{1,2}[.)]|[-*•–])"
# A colon right after a digit is a clock time's ("… Sat at 08:00."), not a list opener.
_DANGLING = re.compile(rf"(?:(?<!\d):\s*{_LIST_MARKER}?|(?:^|\n|(?<=[.!?])\s)\s*{_LIST_MARKER})\s*$")


def dangling_end(text: str) -> str | None:
    match = _DANGLING.search(text.rstrip())
    return f"ends on a list opener {match.group(0).strip()!r}" if match else None


def trim_dangling(text: str) -> str:
    """`text` without a trailing bare list marker and without a trailing sentence that ends in ":"
    (a list opener whose list never came). May return ""."""
    out = text.rstrip()
    for _ in range(5):
        marker = re.search(rf"(?:^|\n|(?<=[.!?])|(?<=\D:))\s*{_LIST_MARKER}\s*$", out)
        if marker:
            out = out[:marker.start()].rstrip()
            continue
        if out.endswith(":"):
            boundary = max((m.end() for m in re.finditer(r"[.!?…](?=\s)|\n", out)), default=0)
            out = out[:boundary].rstrip()
            continue
        break
    return out


# --- claims and promises of actions code did not take -------------------------------------------
# The model decides no write: code schedules, moves, logs, and states it. A reply may still claim or
# promise a write of its own, and it is then false unless code made that write in this turn. Seen on
# the chat page: "honestly I skipped yesterday, I was tired" → "Let's try again tomorrow with a new
# set of sessions scheduled for the next week." above code's "Logged: a skipped practice …" (code
# scheduled nothing). The class, not the wording: first-person claims ("I've moved"), passive and
# nominal states ("has been booked", "your sessions are now at …", "a new set of sessions scheduled
# for", "a reminder set") and promises ("I'll schedule", "let me log", "let's get you booked in").
# Each kind names the tool whose successful call this turn backs it; cancelling and reminders have
# no tool, so such a claim is never backed. Not matched: offers and questions ("I can schedule it if
# you want", "shall I move it?"), a promise that waits on the learner ("reply “option A” and I'll
# schedule it", "if you'd like, I'll move it"), what the learner did ("you moved it to Friday",
# "the session you had scheduled for Monday"), negations ("I haven't scheduled anything").
ACTION_BACKING = {"schedule": "schedule_session", "log": "log_checkin", "cancel": "cancel_session",
                  "reminder": "set_reminder", "profile": "profile_update", "done": "any action"}
# A move or a make-up put in place backs a claim of scheduling too ("I've moved it to Friday").
_ALSO_BACKING = {"schedule": ("move_session", "apply_makeup")}

_PROFILE_FIELD = r"\byour (?:weekly |study )?(?:hours|goal|best time|preferred time|time of day|confidence)(?: score)?"
_SESSION_NOUN = r"(?:sessions?|practices?|practice sessions?|lessons?|slots?|classes|class|runs?|swims?|workouts?)"
_OBJECT = (r"(?:it|them|that|this|those|these|both(?: of them)?|one|(?:your|the|a|an|another|two|three|four|\d+|"
           r"some|new|next|tomorrow's|today's|yesterday's|[a-z]+day's)(?: [\w':-]+){0,3}?)")
_FIRST = r"\bi(?:'ve| have)?(?: just| now| already| also| gone ahead and| went ahead and)?"
_WILL = r"\b(?:i(?:'ll| will|'m going to| am going to|'m gonna)|let me)(?: just| now| also| go ahead and)?"
_SCHEDULE_PP = (r"(?:scheduled|booked|rescheduled|pencil(?:l)?ed(?: you)? in|blocked out|slotted(?: you)? in|"
                r"locked in|lined up)")
_WEAK_PP = r"(?:added|put|set up|created|planned|arranged|saved)"
_MOVE = r"(?:mov|shift|push|bump)"
_ACTION_PATTERNS: list[tuple[str, str, str]] = [
    # (kind, form, pattern). form "claim": a state the reply says is true now; "promise": a write
    # the reply says will happen. Promises in questions or waiting on the learner are offers.
    ("schedule", "first", rf"{_FIRST} (?:{_SCHEDULE_PP}|{_WEAK_PP})\b"),
    # "I've moved it to Friday", "I moved your session." — not "I moved to Lisbon" (a life, not a plan).
    ("schedule", "first", rf"{_FIRST} (?:moved|shifted|pushed|bumped) {_OBJECT}(?: (?:to|back|forward|over|up|"
                          r"later|earlier|until)\b|\s*(?:[.!,;]|$))"),
    ("schedule", "claim", rf"\b(?:has|have|'s|'ve) been (?:{_SCHEDULE_PP}|added|set up|planned|arranged|"
                          r"moved|shifted|pushed|bumped)\b"),
    ("schedule", "claim", r"\b(?:is|are|'s|'re) now (?:scheduled|booked|set(?: up)?|moved|rescheduled|"
                          r"confirmed|locked in|in (?:your|the) (?:plan|calendar|schedule|diary)|"
                          r"on (?:your|the) (?:plan|calendar|schedule))\b"),
    ("schedule", "claim", rf"\b(?:{_SESSION_NOUN}|it|they|that|everything)(?:'s|'re| is| are) now "
                          r"(?:at|on|for|set for|booked for|scheduled for|moved to|in)\b"),
    ("schedule", "claim", rf"\b(?:{_SESSION_NOUN}|it|they|that)(?:'s|'re| is| are) (?:{_MOVE}ed|rescheduled) "
                          r"(?:to|for|back|forward|over)\b"),
    ("schedule", "claim", r"\byou(?:'re| are)(?: now| all)? (?:booked|pencil(?:l)?ed) in\b|\byou(?:'re| are) now "
                          r"(?:booked|scheduled)\b|\bi(?:'ve| have) got you (?:booked|scheduled|down)\b"),
    ("schedule", "nominal", rf"\b(?:new|fresh|another|replacement|make-?up|rescheduled|extra)\b[\w ,'-]{{0,30}}?"
                            rf"\b(?:{_SESSION_NOUN}|plan|schedule|times?)\b(?: is| are|'s|'re)?(?: now)? "
                            rf"(?:{_SCHEDULE_PP}|set up|planned|in place|added|moved|locked in)\b"),
    ("schedule", "nominal", rf"\bwith (?:your |the |a |two |three |\d+ )?(?:[\w-]+ ){{0,3}}?{_SESSION_NOUN} "
                            r"(?:now )?(?:scheduled|booked|moved|rescheduled|set) (?:for|on|to|at)\b"),
    ("schedule", "promise", rf"{_WILL} (?:schedule|book|reschedule|pencil|block out|slot|lock in|line up)\b"),
    ("schedule", "promise", rf"{_WILL} (?:move|shift|push|bump) {_OBJECT} (?:to|back|forward|over|up|later|"
                            r"earlier|until)\b"),
    ("schedule", "promise", rf"{_WILL} (?:add|put|set up|create|plan|arrange|get you)(?: you)? (?:[\w'-]+ ){{0,4}}?"
                            rf"(?:{_SESSION_NOUN}|plan|schedule|calendar|diary|booked|scheduled)\b"),
    ("schedule", "promise", rf"\blet's (?:get (?:you|it|that|this|them|those|these|your [\w' -]{{1,25}}?|"
                            rf"the [\w' -]{{1,25}}?) (?:booked|scheduled|rescheduled|moved|set up|locked in|"
                            r"pencil(?:l)?ed in|on (?:the|your) (?:calendar|schedule)|in (?:the|your) "
                            rf"(?:calendar|diary|plan))|(?:schedule|book|reschedule) {_OBJECT}"
                            rf"|(?:move|shift|push) {_OBJECT} (?:to|back|forward|over|until))\b"),
    ("schedule", "promise", r"\b(?:will|'ll) be (?:scheduled|booked|rescheduled|moved|added to your plan)\b"),
    ("log", "first", r"\bi(?:'ve| have)?(?: just| now| already| also)? (?:logged|recorded|noted down|marked|saved|"
                     r"updated)\b"),
    # The thing logged is named: "nothing is logged", "failures are logged" are not claims.
    # "that is recorded" is as often a relative clause: a pronoun counts in its contracted form.
    ("log", "claim", r"(?:\b(?:it|that|this|they)(?:'s|'re|'s been| has been| have been)|\b(?:your|the|today's|"
                     r"yesterday's|[a-z]+day's) (?:[\w'-]+ )?(?:skip|session|practice|check-?in|run|swim|workout|"
                     r"lesson|progress|streak)(?:'s| is| are| has been| have been|'s been))(?: now)? (?:logged|"
                     r"recorded|noted(?: down)?|marked (?:as|down)|saved|tracked)\b"),
    ("log", "promise", rf"{_WILL} (?:log|record|mark|note (?:it|that|this) down|make a note|save|update|track)\b"),
    ("cancel", "first", r"\bi(?:'ve| have)?(?: just| now| already| also)? (?:cancel(?:l)?ed|called off|"
                        r"(?:removed|deleted|cleared|dropped) (?:it|that|them|this|those|your|the|both))\b"),
    ("cancel", "claim", r"\b(?:has|have|'s|'ve) been (?:cancel(?:l)?ed|called off|removed|deleted|cleared)\b"
                        r"|\b(?:is|are|'s|'re) now (?:cancel(?:l)?ed|off)\b"),
    ("cancel", "promise", rf"{_WILL} (?:cancel|call off|(?:remove|delete|clear|drop) (?:it|that|them|this|those|"
                          r"your|the|both))\b"),
    ("reminder", "first", r"\bi(?:'ve| have)?(?: just| now| already| also)? (?:set|created|scheduled|added|"
                          r"set up) (?:up )?(?:a |an |you a |the |your |some )?(?:\w+ )?reminders?\b"),
    ("reminder", "nominal", r"\breminders?(?:(?:'s| is| are)(?: now| all)?| (?:has|have) been)? set\b"
                            r"|\breminders?(?:'s| is| are| has been| have been)(?: now| all)? (?:scheduled|created|"
                            r"in place|ready|on)\b"),
    ("reminder", "promise", r"\bi(?:'ll| will|'m going to| am going to)(?: also)? (?:remind you(?! (?:that|of|why|"
                            r"how|what))|send you (?:a )?reminders?|set (?:up )?(?:a |you a )?reminders?|"
                            r"ping you|nudge you|text you|message you)\b"),
    # A change of the learner's profile (weekly hours, goal, best time, confidence) is code's write
    # too: before code's own "Shall I change your weekly hours to 1?", the model said "Reduced to 1
    # hour for this week."
    ("profile", "first", rf"{_FIRST} (?:changed|updated|lowered|reduced|raised|increased|switched|adjusted) "
                         rf"(?:{_PROFILE_FIELD}|(?:it|that|them) (?:down |up )?to)\b"),
    ("profile", "claim", r"^\W*(?:reduced|lowered|raised|increased|changed|updated|switched|adjusted) "
                         r"(?:it |that |this |them )?(?:down |up )?to\b"
                         rf"|{_PROFILE_FIELD}(?:'s| is| are| has been| have been) (?:now )?(?:changed|updated|lowered|"
                         r"reduced|raised|increased|switched|adjusted)\b"),
    ("profile", "promise", rf"{_WILL} (?:change|update|lower|reduce|raise|increase|switch|adjust) "
                           rf"(?:{_PROFILE_FIELD}|(?:it|that|them) (?:down |up )?to)\b"),
    # A sentence that is only "Done." / "All set!" claims that something was done, whatever it was:
    # any write code made this turn backs it ("yes please" with nothing pending got "Done.").
    ("done", "claim", r"^\W*(?:(?:it's|that's|it is|that is|all|everything's|everything is)\s+)?(?:done|sorted|"
                      r"taken care of|all set)\W*$"),
]
_ACTIONS = [(kind, form, re.compile("(?i)" + pattern)) for kind, form, pattern in _ACTION_PATTERNS]
# A promise that waits on the learner is an offer: "if you'd like, I'll move it", "reply “option A”
# and I'll schedule it" (code's own planner line), "once you pick a time".
_CONDITIONAL = re.compile(
    r"(?i)\b(?:if|once|when|whenever|after|as soon as) (?:you|that)\b"
    r"|\b(?:reply|say|pick|choose|tell me|confirm|let me know)\b[^.!?]*\band (?:i'll|i will)\b")
# A state described in the past is the learner's history, not this turn's write ("you had a new
# session scheduled for Monday").
_PAST_FRAME = re.compile(r"(?i)\b(?:you had|you'd had|there (?:was|were)|was|were|last (?:week|time))\b")


def action_claims(text: str, done: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The claims and promises of writes in `text` that no tool of `done` (the action tools code ran
    successfully this turn) backs: [(tool, matched words)], at most one per kind. Judged sentence by
    sentence: a question or a promise waiting on the learner is an offer, a passive or nominal state
    set in the past is history; a first-person claim ("I've scheduled") is a claim wherever it stands."""
    done = set(done)
    found: dict[str, str] = {}
    for sentence in split_sentences((text or "").replace("’", "'")):
        question = sentence.rstrip().endswith("?")
        for kind, form, pattern in _ACTIONS:
            tool = ACTION_BACKING[kind]
            if (tool in done or kind in found or any(t in done for t in _ALSO_BACKING.get(kind, ()))
                    or (kind == "done" and done)):
                continue
            match = pattern.search(sentence)
            if not match:
                continue
            if form == "promise" and (question or _CONDITIONAL.search(sentence)):
                continue
            if form in ("claim", "nominal") and (question or _PAST_FRAME.search(sentence[:match.start()])):
                continue
            found[kind] = match.group(0)
    return [(ACTION_BACKING[kind], said) for kind, said in found.items()]


# --- session times the reply names ------------------------------------------------------------------
# A reply that names a session by its day and time ("your Thu 19:00 session", "(Mon, Thu at 19:00)")
# states a fact about the plan, and the plan is in the database: a day and time that is no session
# of the learner's, no option offered and nothing said in the conversation is made up. Checked
# against data, not wording ("yes please" after a move got "here's the updated schedule … (Thu at
# 19:00, Sat at 08:00)" for a session that had just moved off Thursday).
_DAY = r"(?:mon|tue|wed|thu|fri|sat|sun)(?:day|s|nes|nesday|rs|rsday|urday|sday)?s?\.?"
_DAYS_AT = re.compile(rf"(?i)\b(?P<days>{_DAY}(?:\s*(?:,|and|&)\s*{_DAY})*)\s*(?:at\s+|@\s*)?"
                      r"(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>am|pm|h\b|o'clock)?")
_DAY_CODES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def session_times(text: str) -> set[tuple[int, str]]:
    """The (weekday, "HH:MM") pairs the text names; an hour without am/pm stands for both readings
    ("7:00" is 07:00 or 19:00: either one known is enough, see `times_unknown`)."""
    found: set[tuple[int, str]] = set()
    for match in _DAYS_AT.finditer(text or ""):
        marker = (match.group("ap") or "").lower()
        if not (match.group("m") or marker):
            continue  # "on friday 3 sessions": a number, not a time
        hour, minute = int(match.group("h")), match.group("m") or "00"
        hours = {hour + 12 if marker == "pm" and hour < 12 else 0 if marker == "am" and hour == 12 else hour}
        if marker not in ("am", "pm") and 1 <= hour <= 11:
            hours.add(hour + 12)
        for day in re.findall(r"(?i)mon|tue|wed|thu|fri|sat|sun", match.group("days")):
            found |= {(_DAY_CODES.index(day.lower()), f"{h:02d}:{minute}") for h in hours if h < 24}
    return found


def times_unknown(text: str, known: set[tuple[int, str]]) -> list[str]:
    """The day-and-time mentions of `text` none of whose readings is in `known`, as written."""
    unknown = []
    for match in _DAYS_AT.finditer(text or ""):
        said = session_times(match.group(0))
        if said and not said & known:  # "on friday 3 sessions" names no time
            unknown.append(match.group(0).strip())
    return unknown


# --- a reply that dodges the question ---------------------------------------------------------------
_CONTENT_STOP = frozenset({"what", "when", "where", "which", "would", "could", "should", "about", "with", "your",
                           "have", "this", "that", "there", "their", "them", "they", "from", "just", "like", "really",
                           "think", "know", "some", "will", "make", "does", "doing", "been", "want", "need", "help",
                           "how", "you", "the", "and", "for", "can", "any", "are", "did", "get", "much", "more"})


def _content_words(text: str) -> set[str]:
    return {_stem(w.lower()) for w in words(text) if len(w) >= 4 and w.lower() not in _CONTENT_STOP}


def _addresses(asked: set[str], said: set[str]) -> bool:
    """Some word of the reply is one of the asked words, or shares its stem with one ("draw" and
    "drawing"): four letters at least, so that "work" and "worry" do not."""
    return any(a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))
               for a in asked for b in said)


def dodge(reply: str, learner_text: str, generic: Iterable[str] = (), *, by_words: bool = True,
          known: str = "") -> str | None:
    """A question answered with a generic line ("Let's keep your focus on …", a fallback of another
    act) or, with `by_words`, with a text that shares no content word with the question nor with
    what the coach knows of this learner (`known`: the goal, the remembered facts — "am I getting
    anywhere?" is answered by "25 to 38 words a minute" from memory): the learner's question goes
    unanswered. `generic` are the generic lines (templates with their goal filled in). The guard
    asks for the generic line only (a reply may answer in other words than the question's);
    evaluation counts both."""
    from coaching.turn.reading.rules import asks

    if not learner_text or not asks(learner_text):
        return None
    flat = " ".join(reply.split())
    for line in generic:
        if line and line in flat:
            return f"generic line: {line[:60]}"
    asked = _content_words(learner_text)
    if by_words and asked and not _addresses(asked | _content_words(known), _content_words(reply)):
        return "shares no content word with the question or with what is known of the learner"
    return None
