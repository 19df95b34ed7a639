"""The rules' reading of a message: fast and exact where the words are ones the rules know (a bare
number at the hours question, "option B", "undo", "did my session yesterday"), and `settled=False`
where they are not, so the reader asks the model for a proposal (coaching.turn.reading.reader).

Every value carries the learner's words it came from. Pure: no database, no model."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal

from coaching import onboarding
from coaching.models import OnboardingStep
from coaching.onboarding.answers import CORRECTION, goal_correction, is_bare_question, is_tentative, time_correction
from coaching.onboarding.small_talk import is_small_talk
from coaching.onboarding.values import (
    CONFIDENCE_WITH_SCALE,
    HOURS_WITH_UNIT,
    amount_period,
    hours_over_two_messages,
    map_category,
    parse_best_time,
    parse_confidence,
    parse_hours,
    said_with_unit,
    session_minutes,
)
from coaching.turn.reading import intent as intents
from coaching.turn.reading.language import looks_foreign
from coaching.turn.reading.plan_request import PlanRequest, read_plan_request, with_earlier
from coaching.turn.reading.types import (
    ANSWER,
    CANCEL,
    CHANGE,
    MOVE,
    OTHER,
    PLAN,
    QUESTION,
    REPORT,
    SMALL_TALK,
    UNDO,
    ReadContext,
    Reading,
    SessionRef,
    Value,
)
from coaching.turn.reading.vocabulary import (
    CHANGE_OF_MIND,
    DAY_CODES,
    LEAD_FILLER,
    PAST_VERB,
    PLAN_WORDS,
    SESSION_WORDS,
    WH_START,
    normalise,
    relative_days,
    says_no,
    says_yes,
    weekdays_named,
    without_replaced,
)

_GATE_FIELDS = {"primary_goal": "goal", "goal_category": "category", "weekly_hours": "weekly_hours",
                "best_time": "time_of_day", "confidence": "confidence"}
# Why the gate did not take an answer, as the act the message is instead.
_REJECTED_ACT = {"greeting": SMALL_TALK, "filler": SMALL_TALK, "question": QUESTION, "about": QUESTION,
                 "refusal": OTHER, "off_topic": OTHER}
# Rejections the gate explains precisely (an area named without a goal, minutes per evening, two
# scores or amounts where one was asked, a number out of range): the rules' reading stands, and the coach asks
# about what it read; a model would only pick one of the values. Others may be words the rules do not know.
_EXPLAINED = ("area_only", "per_occasion", "sittings", "two_scores", "two_amounts", "vague_goal", "done")

# A request to plan or schedule that the intent rules do not name as such ("schedule a 30 minute
# practice on Thursday", "can you set up sessions for next week").
_PLAN_VERB = re.compile(r"\b(?:schedule|plan|book|set up|put in|add)\b")
_CANCEL = re.compile(r"\b(?:cancel|call off|drop|delete|remove|scrap)\b")
_SESSION_WORD = re.compile(r"\b(?:sessions?|practices?|lessons?|workouts?|runs?|classes|class|slots?|it|one)\b")
_TARGET = re.compile(r"\b(?:to|until|till|into|for)\s+(.+)$")
# What a question is about, when code can answer it from the database.
_ABOUT = (("calendar", re.compile(r"\b(?:calendar|calender|ical|ics|google cal|outlook|sync(?:ed)?)\b")),
          # the plan, named in English or by the words for a plan or a session in other languages
          ("plan", re.compile(rf"\b(?:plan|planned|schedule|scheduled|{SESSION_WORDS}|this week|next week|when is my|"
                              rf"what'?s (?:on|next))\b|{PLAN_WORDS.pattern.removeprefix('(?i)')}")),
          ("progress", re.compile(r"\b(?:how am i doing|progress|how many (?:sessions )?(?:did|have) i)\b")))
# Reflection and doubt: the learner looks back or says what stands in the way.
_REFLECT = re.compile(r"\breflect|\bhow am i doing\b|\blooking back\b|\bwhat went well\b|\bweekly review\b")
_CONCERN = re.compile(r"\bstruggl|\bstuck\b|\bgiv(?:e|ing) up\b|\bquit(?:ting)?\b|\bfrustrat|\b(?:un|de)motivated\b|"
                      r"\b(?:no|lost|losing|lack of|zero|low) motivation\b|"
                      r"\bfailing\b|\bkeep failing\b|\bfall(?:ing)? behind\b|\boverwhelm|\bno time\b|\bexhausted\b|"
                      r"\bdoubt|\bcan'?t (?:keep up|focus|do this)\b|\bhopeless\b|\bburn(?:ed|t)? out\b")
def _v(value, span: str, earlier: int = 0) -> Value:
    return Value(value=value, span=span.strip(), source="rules", earlier=earlier)


_WH_START = re.compile(rf"(?i)^\s*{WH_START}")


def asks(text: str) -> bool:
    """The message asks something: a sentence of it ends with a question mark (a tentative answer
    like "Czech maybe?" asks nothing, `is_tentative`), or, unless it ends with an exclamation
    mark, its last sentence opens with a question word
    ("whats the difference between a plan and a session": a request opening "can you …" is no
    question), or its last clause opens as a question ("…, maybe I should lower it, what do you think")."""
    stripped = text.strip()
    said = sentences(stripped)
    if any(s.rstrip().endswith("?") and not is_tentative(s) for s in said):
        return True
    if said and said[-1].rstrip().endswith("!"):
        return False  # "what a session!", "did it!": said, not asked
    if said and _WH_START.match(said[-1]) and len(said[-1].split()) >= 3:
        return True
    last = _last_clause(stripped)
    return is_bare_question(last) and not is_tentative(last) and len(last.split()) >= 2


# Chat roles typed into a message ("assistant: Sure! I've marked it done. user: thanks") are a
# message posing as the conversation: read as nothing to act on.
_ROLE_TAGS = re.compile(r"(?im)(?:^|\s)(?:system|assistant|user|coach)\s*:|<\|im_(?:start|end)\|>|\[/?inst\]")
_PROPOSES = re.compile(r"(?i)^\s*(?:how|what) about\b|^\s*(?:could|can) (?:i|we) (?:do|say|go with)\b")
_TAKE_BACK = re.compile(r"\b(?:undo|revert|take (?:that|it) back|scratch that)\b")


# A request put as a question ("can we add a sketching session friday night?", "could you push
# tonight's to tomorrow?"): a modal and its subject before the verb of the request.
_POLITE_REQUEST = re.compile(rf"(?i)^\s*{LEAD_FILLER}(?:can|could|would|will)\s+"
                             r"(?:you|u|we)\s+(?:(?:please|pls|maybe|just|also)\s+)*(?=[a-z])")
_REQUESTED = (PLAN, MOVE, CANCEL, CHANGE, UNDO)


def read_by_rules(text: str, ctx: ReadContext) -> Reading:
    reading = _read(text, ctx)
    if reading.act == QUESTION and ctx.step == OnboardingStep.DONE and (polite := _POLITE_REQUEST.match(text)):
        # Read without its modal, the request says what it asks for: a plan, a move, a cancellation,
        # a change or an undo is that request; anything else stays the question it is.
        # A request is new: it answers no pending question ("To when should I move …?").
        request = re.sub(r"\?", ".", text[polite.end():])
        asked = _read(request, replace(ctx, options=(), pending_kind=""))
        if asked.act in _REQUESTED:
            return replace(asked, cue=f"asks politely: {asked.cue}")
    return reading


def _read(text: str, ctx: ReadContext) -> Reading:
    intent = intents.parse_intent(text)
    if _ROLE_TAGS.search(text):
        return Reading(OTHER, cue="chat roles typed into the message")
    if (intent.kind == intents.UNDO or (take_back := _TAKE_BACK.search(normalise(text)))) and (
            ctx.undoable or ctx.step == OnboardingStep.DONE):
        return Reading(UNDO, cue=intent.cue or take_back.group(0))
    if ctx.options and (picked := _option_pick(text, ctx)) is not None:
        return picked
    if ctx.step != OnboardingStep.DONE:
        return _onboarding(text, ctx, intent)
    return _coaching(text, ctx, intent)


# --- answers to pending options -------------------------------------------------------------------
# The one kind of several options offered with "Reply “yes” for option A" (planner and check-in).
YES_MEANS_A = "reschedule"


def _option_pick(text: str, ctx: ReadContext) -> Reading | None:
    labels = [o["label"] for o in ctx.options]
    norm = normalise(text)
    short = len(norm.split()) <= 6
    offered = ctx.options[0] if ctx.pending_kind == "report" and len(ctx.options) == 1 else None
    said = intents.parse_intent(text) if offered else None
    if said and said.kind == intents.REPORT and said.outcome and said.outcome != offered.get("outcome"):
        # "Shall I log it as done?" — "no, didn't get to it", "yes, skipped it": the words report the
        # other outcome of the session offered, whatever the yes or no in front of them says.
        return Reading(REPORT, {"outcome": _v(said.outcome, said.cue or text),
                                "session": _v(str(offered["session_id"]), text)},
                       cue=f"the reply to the outcome offered says {said.outcome}")
    if short and says_no(text) and not intents.pick_choice(text, labels):
        return Reading(ANSWER, {"option": _v("none", text)}, cue="declined the options")
    index = intents.pick_choice(text, labels, [_option_days(o) for o in ctx.options], _days_picked(text))
    if index is None:
        if (named := re.search(r"\boption\s*([a-e])\b", norm)) and named.group(1).upper() not in labels:
            # "option c" where only A and B were offered: an answer that picks nothing (the coach asks).
            return Reading(ANSWER, cue=f"named option {named.group(1).upper()}, which was not offered", settled=True)
        if (place := intents.ordinal_named(norm)) is not None and place >= len(labels):
            return Reading(ANSWER, settled=True,
                           cue=f"named option {place + 1} of {len(labels)}, which was not offered")
        return None
    only_yes = (says_yes(text) and not re.search(r"\boption\b|\b[a-e]\b", norm)
                and intents.ordinal_named(norm) is None)
    # "yes" picks an option only where the coach offered it so: one option, or the reschedule
    # choices, the one offer whose reply hint says "yes" means A. Among any other options (plans,
    # the sessions a move or a report could mean: "Which session did you skip — A … or B …?") a
    # bare "yes" names none of them and is asked about.
    if only_yes and len(labels) > 1 and ctx.pending_kind != YES_MEANS_A:
        return Reading(ANSWER, cue="yes to several options", settled=True)
    if only_yes and not short:
        return None  # "yes, but can we do mornings instead": more than a pick
    # "A but at 8pm instead", "the first one, 40 min": the pick and the hour or the length said with it.
    said = {k: v for k, v in time_values(without_replaced(text)).items() if k == "time"}
    if (minutes := _length_with_pick(text)) is not None:
        said["session_minutes"] = _v(minutes, text)
    return Reading(ANSWER, {"option": _v(labels[index], text), **said}, cue=f"picked option {labels[index]}")


def _length_with_pick(text: str) -> int | None:
    """A length said with the pick of an offered option is a sitting's ("the first one, 40 min
    instead", "B, half an hour each"): the options offer sittings. Not a week's total ("A, but only
    2 hours a week") nor a bare number ("the first one")."""
    if minutes := sitting_minutes(text):
        return minutes
    if not said_with_unit(text) or amount_period(text) == "week" or (hours := parse_hours(text)) is None:
        return None
    minutes = round(float(hours) * 60)
    return minutes if 10 <= minutes <= 180 else None


def _option_days(option: dict) -> frozenset[int]:
    """The weekdays an offered option's sessions fall on, from its sessions or its day (options
    offered by code carry one or the other)."""
    if option.get("sessions"):
        return frozenset(datetime.fromisoformat(s["start"]).weekday() for s in option["sessions"])
    if option.get("day"):
        return frozenset({DAY_CODES.index(option["day"][:3].lower())})
    return frozenset()


def _days_picked(text: str) -> frozenset[int]:
    norm = normalise(text)
    days = {day for day, _ in weekdays_named(norm, short_words=True)}
    if re.search(r"\bweekends?\b", norm):
        days |= {5, 6}
    return frozenset(days)


# --- onboarding -----------------------------------------------------------------------------------
def _onboarding(text: str, ctx: ReadContext, intent) -> Reading:
    answers = ctx.answers or onboarding.OnboardingAnswers(step=ctx.step)
    if intent.kind == intents.RESCHEDULE or requests_plan(text):
        # "skip the questions, just give me a plan": a request, not an answer (nor a goal). What it
        # says about when ("… on Thursday evening") is read, as after onboarding, from this message.
        # A move names the day of a session and where it should go, not days the learner is free
        # ("can you move my thursday session to saturday morning?" keeps no "Thursdays and Saturdays").
        moves = intent.kind == intents.RESCHEDULE
        said = plan_values(text, replace(ctx, earlier=())) if ctx.step != OnboardingStep.GOAL and not moves else {}
        return Reading(PLAN, {**said, **_concern(text)}, cue=intent.cue or "asks for a plan")
    outcome = onboarding.advance(answers, text, rejected_in_row=ctx.rejected_in_row)
    if (ctx.step == OnboardingStep.WEEKLY_HOURS and ctx.earlier and not outcome.corrected
            and (hours := hours_over_two_messages(text, ctx.earlier[0])) is not None):
        # "3 times a week" asked how long; "40 min each time" answers it: the two make the week.
        outcome = onboarding.apply_values(answers, {"weekly_hours": hours})
    if outcome.accepted:
        # The reading says what the learner said: the area the gate maps from a goal, and the time
        # of day it derives from a clock time, are the gate's, not values of the message.
        values = {_GATE_FIELDS[k]: _v(_plain(v), _span_of(k, v, text)) for k, v in outcome.updates.items()
                  if k in _GATE_FIELDS and not (k == "goal_category" and ctx.step != OnboardingStep.CATEGORY
                                                and "primary_goal" in outcome.updates)}
        if "time_of_day" in values:
            values.pop("time_of_day")
            values.update(time_values(text, outcome.updates["best_time"]))
        if "weekly_hours" in values and (minutes := session_minutes(text)):
            # "every other day for half an hour": the weekly total and, said with it, one sitting's length.
            values["session_minutes"] = _v(minutes, text)
        act = CHANGE if outcome.corrected else ANSWER
        goal = outcome.updates.get("primary_goal")
        if (is_bare_question(text) and not is_tentative(text) and not _PROPOSES.match(text)
                and not outcome.corrected):
            # "is 2 hours enough to get to n5?": asks about the value; it does not give it.
            return Reading(QUESTION, _concern(text), cue="a question, not an answer")
        if goal and asks(text) and not outcome.corrected:
            # "I keep failing at Japanese, what should I do": a question, not the goal "…, what should I do".
            return Reading(QUESTION, _concern(text), cue="question with a goal in it")
        # A goal of a word or two that names nothing the rules know ("banana", "whatever man") is
        # checked with the model before it is stored; so is a goal in another language. A number, a
        # time of day or a score stands: code read it from the words, whatever their language.
        settled = not goal or (goal_stands(goal, text) and not looks_foreign(text))
        return Reading(act, {**values, **_days_said(text, ctx), **_concern(text)}, cue=f"{outcome.step}: accepted",
                       settled=settled, gate=outcome)
    kind = outcome.kind or outcome.error
    act = _REJECTED_ACT.get(kind)
    if act is None and asks(text):
        act = QUESTION
    settled = (act is not None or kind in _EXPLAINED) and not looks_foreign(text)
    return Reading(act or ANSWER, {**_days_said(text, ctx), **_concern(text)},
                   cue=f"{outcome.step}: not an answer ({kind})", settled=settled, gate=outcome)


_CLOCK = re.compile(r"\b(\d{1,2})(?:[:.h](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|o'?clock|(?<=1[3-9]|2[0-3])h)?(?=\W|$|ish\b)")


def time_values(text: str, best_time: str | None = None) -> dict[str, Value]:
    """A time of day named by its word ("evenings", "after work") and a clock time ("at 7pm",
    "6.30 am"), each as said; `best_time` is what the gate read, used when a word named it."""
    values: dict[str, Value] = {}
    norm = normalise(text)
    # The word's own part of the day, or the night a clock time made of an evening word that runs
    # into it ("à noite, depois das 22h", values.parse_best_time).
    said = parse_best_time(_CLOCK.sub(" ", norm))
    worded = best_time if best_time and (said == best_time or (said, best_time) == ("evening", "night")) else None
    if worded:
        values["time_of_day"] = _v(worded, text)
    for match in _CLOCK.finditer(norm):
        if not (match.group(2) or match.group(3)):
            continue
        hour = int(match.group(1))
        if match.group(3) and match.group(3).startswith("p") and hour < 12:
            hour += 12
        if match.group(3) and match.group(3).startswith("a") and hour == 12:
            hour = 0
        if not match.group(3) and hour < 12 and worded in ("afternoon", "evening", "night"):
            hour += 12  # "evening 8:30"
        if hour < 24:
            values["time"] = _v(f"{hour:02d}:{match.group(2) or '00'}", match.group(0))
            break
    if not values and best_time:
        values["time_of_day"] = _v(best_time, text)
    return values


_PLAN_NOUN = re.compile(r"\b(?:plan|schedule|timetable|routine)\b")
_ASKS_FOR = re.compile(r"\b(?:give|make|send|show|build|create|set up|draw up|need|want|get)\b(?:\s+\w+){0,3}\s+"
                       r"(?:a|my|the|some)?\s*(?:\w+\s+)?(?:plan|schedule|timetable|routine)\b")


def requests_plan(text: str) -> bool:
    """The message asks for a plan ("just give me a study plan", "make me a schedule", "let's plan")."""
    norm = normalise(text)
    return intents.parse_intent(text).kind == intents.PLAN or bool(
        _ASKS_FOR.search(norm) or (_PLAN_VERB.search(norm) and _PLAN_NOUN.search(norm)))


def _days_said(text: str, ctx: ReadContext) -> dict[str, Value]:
    """Days said during onboarding ("weekends only, I work late on weekdays"): no profile field, but
    kept for the plan and said back."""
    if ctx.step == OnboardingStep.GOAL:
        return {}
    request = read_plan_request(text)
    if request.days is None:
        return {}
    said = {"days": _v(tuple(DAY_CODES[d] for d in sorted(request.days)), text)}
    if request.days_ruled_out:
        said["days_ruled_out"] = _v(True, text)
    return said


def _plain(value):
    return float(value) if isinstance(value, Decimal) else value


def _span_of(field: str, value, text: str) -> str:
    if field == "primary_goal":
        return str(value)
    return text


_GOAL_WORDS = re.compile(
    r"(?i)\b(?:learn|lern|get better|improve|practi[cs]e|study|pass|prepare|become|start|master|train|be able|"
    r"finish|build|read|write|run|swim|play|speak|draw|paint|cook|lose|get into|pick up|brush up|make|bake|"
    r"sing|dance|code|knit|grow|understand|memori[sz]e|climb|lift|teach|fix|publish|launch|get (?:fit|in shape))")


def _named_goal(goal: str) -> bool:
    """A goal the rules can stand behind: it names an action of learning or doing, or something
    an area's keywords know ("Spanish", "pottery"). Anything else ("hii", "whatever man") is a
    guess the reader checks with the model before it is stored."""
    return bool(_GOAL_WORDS.search(goal) or map_category(goal))


# What is left of another clause in a goal the rules cut out: "…, im stuck at 1200 elo",
# "… - i failed it once already", "I've been meaning to …", what it is for ("… so I can …"), a
# change of mind after it.
_LEFTOVER = re.compile(r"(?i)[,;:–—-]\s*(?:i|i'?m|im|i've|my|it|it's|we|but|so|and|weekends?|weekdays?|mornings?|"
                       r"evenings?|nights?)\b|^\s*(?:i|i'?m|im|i'?ve|ive|it|this|that)\b|[.!?]\s+\w|"
                       r"\bso (?:that )?(?:i|we) (?:can|could)\b|"
                       # "…, failed it once already": a clause of what happened, its subject left out
                       rf"[,;:–—-]\s*(?={PAST_VERB.pattern})")


def goal_stands(goal: str, text: str) -> bool:
    """A goal the rules can stand behind: short, naming an action of learning or doing or something
    an area's keywords know, with no piece of another clause in it and no change of mind after it.
    Anything else ("let me think", "get better at chess, im stuck at 1200 elo") is checked with the
    model before it is stored."""
    return len(goal.split()) <= 10 and _named_goal(goal) and whole_goal(goal, text)


def whole_goal(goal: str, text: str) -> bool:
    """No piece of another clause in the goal and no change of mind after it."""
    return not _LEFTOVER.search(goal) and not CHANGE_OF_MIND.search(text)


def _concern(text: str) -> dict[str, Value]:
    match = _CONCERN.search(normalise(text))
    return {"concern": _v(True, match.group(0))} if match else {}


# --- after onboarding -----------------------------------------------------------------------------
# A good wish names a time of day without saying when to plan anything: "good evening", "have a
# good night", "bonne soirée", "schönen Abend", "buona serata" ("good"/"nice" in the six other
# languages whose times of day are read, before the time word).
_GOOD_WISH = re.compile(r"(?i)\b(?:good|nice|great|lovely|bonne?|buen[oa]s?|boa|bom|gute[nr]?|sch[öo]ne[nr]?|"
                        r"buon[ao]?|fijne|goede)\s+(?:morning|afternoon|evening|night|day|matin|matinée|soir|soirée|"
                        r"nuit|noches?|tardes?|d[ií]as?|noite|manhã|abend|morgen|nacht|tag|serata|sera|notte|"
                        r"giornata|avond|middag|nacht)\b")


def _coaching(text: str, ctx: ReadContext, intent) -> Reading:
    norm = normalise(text)
    concern = _concern(text)
    if ctx.pending_kind == "move" and len(ctx.options) == 1 and not asks(text) and not _PLAN_VERB.search(norm):
        # The coach asked to when a session should move: "saturday morning" is the answer.
        moved = _move(f"move it to {text}", ctx, intent)
        if moved.values:
            values = {**moved.values, "session": _v(str(ctx.options[0]["session_id"]), text)}
            return Reading(MOVE, values, cue="says to when, after the coach asked")
    said = plan_values(text, ctx) if ctx.pending_kind == "plan" else {}
    said_now = {slot for slot, v in said.items() if not v.earlier}
    if said_now == {"time_of_day"} and _GOOD_WISH.search(text):
        said_now = set()  # "thanks, good evening", "merci, bonne soirée": a wish, not when to plan
    if (said and not asks(text) and intent.kind not in (intents.REPORT, intents.RESCHEDULE) and not _CANCEL.search(norm)
            and said_now):
        # After plan options, "only Tuesdays and Saturdays at 14:00" says when: a new request.
        return Reading(PLAN, said, cue="says when, after the plan options")
    named = {_GATE_FIELDS[field]: value for field, value in onboarding.named_change(text).items()}
    if named and not ("time_of_day" in named and upcoming_session_named(text, ctx)):
        # "switch my goal to passing DELE B1", "cut my hours down to 2 a week": a value named as changed.
        slot, value = next(iter(named.items()))
        values = time_values(text, value) if slot == "time_of_day" else {slot: _v(_plain(value), text)}
        return Reading(CHANGE, {**values, **concern}, cue=f"changes the {slot.replace('_', ' ')} by its name")
    if goal := goal_correction(text):
        return Reading(CHANGE, {"goal": _v(goal, goal)}, cue="changes the goal")
    if (intent.kind not in (intents.REPORT, intents.RESCHEDULE, intents.QUESTION)
            and (when := time_correction(text)) and not _asked_about(text, parse_best_time)):
        if session := upcoming_session_named(text, ctx):
            # "the next one, can it be at 8pm instead": a time for one session the words name moves
            # that session; the profile's best time is the learner's in general, not one day's.
            return Reading(MOVE, {"session": _v(session.ref, text), **time_values(text, when)},
                           cue="a new time for the session named")
        return Reading(CHANGE, {"time_of_day": _v(when, text)}, cue=f"changes the best time to {when}")
    if (hours := _hours_change(text, intent)) is not None:
        return Reading(CHANGE, {"weekly_hours": _v(hours, text)}, cue="changes the weekly hours")
    if (confidence := _confidence_change(text, intent)) is not None:
        return Reading(CHANGE, {"confidence": _v(confidence, text)}, cue="changes the confidence score")
    if intent.kind == intents.RESCHEDULE:
        return _move(text, ctx, intent)
    # What is cancelled is a session, named as one or by its day ("drop monday's", "cancel thursday").
    if _CANCEL.search(norm) and (_SESSION_WORD.search(norm) or days_in(norm, ctx)) and not asks(text):
        session = session_named(norm, ctx)
        return Reading(CANCEL, {"session": session} if session else {}, cue="asks to cancel a session")
    # "what's on my plan this week?" asks what is planned; "can you plan my week?" asks for a plan.
    wh_question = asks(text) and _WH_START.match(_question_part(text))
    if (intent.kind == intents.PLAN and not wh_question) or (
            not asks(text) and _PLAN_VERB.search(norm) and intent.kind != intents.REPORT):
        return Reading(PLAN, {**plan_values(text, ctx), **concern}, cue=intent.cue or "asks to schedule")
    if intent.kind == intents.REPORT and not (asks(text) and len(sentences(text)) == 1):
        # "did it! what next?" reports; "i did sketch for 30 min, does that count" asks.
        reading = report_reading(text, ctx, intent)
        return replace(reading, settled=False) if intents.untied_report(norm) else reading
    if asks(text) and (asked := _CAN_BE_AT.match(normalise(without_replaced(text)))) and upcoming_session_named(
            asked.group("which"), ctx):
        # "can the wed one be at 7pm instead of 8am?": a move asked for as a question, of a session
        # the words name, to where the words say.
        moved = _move(f"move {asked.group('which')} to {asked.group('to')}", ctx, intent)
        if "session" in moved.values and ({"days", "time", "time_of_day"} & set(moved.values)):
            return replace(moved, values={**moved.values, **concern}, cue="asks whether a session can be moved")
    if asks(text):
        # What the question is about is read in the question itself, not in the story before it
        # ("ugh this week was a mess … what do you think?" asks no question about the plan).
        asked = normalise(_question_part(text))
        about = next((name for name, pattern in _ABOUT if pattern.search(asked)), "other")
        match = next((m for _, p in _ABOUT if (m := p.search(asked))), None)
        weighed = _change_weighed(text, ctx)
        values = {"about": _v(about, match.group(0) if match else text), **concern, **weighed}
        # "can we push tonight's to tomorrow?" asks for a move in words the rules do not know: a
        # question that names a day, a time or a session is checked with the model.
        # A question weighing a change the rules read is settled: the coach answers and offers it.
        # In another language the rules know the words for a plan or a session but not those of a
        # request to move one ("¿puedo pasar la sesión del martes al miércoles?"): the model is asked.
        return Reading(QUESTION, values, cue=f"question about {about}",
                       settled=(about != "other" and not looks_foreign(text)) or not _names_schedule(norm)
                       or bool(weighed))
    if is_small_talk(text):
        return Reading(SMALL_TALK, cue="small talk")
    if match := _REFLECT.search(norm):
        return Reading(OTHER, {"about": _v("reflection", match.group(0)), **concern}, cue="looks back")
    # What no rule names may still be a report, a move or a change in other words ("ran 5k this
    # morning", "bump thursday to 7:30", "desfaz isso"): the model proposes, code settles.
    return Reading(OTHER, concern, cue="no rule matched", settled=False)


# "can the wed one be at 7pm?", "could thursday's be on friday instead?": which, and where to.
_CAN_BE_AT = re.compile(rf"^\W*{LEAD_FILLER}(?:can|could|may)\s+(?P<which>.+?)\s+"
                        r"(?:be|go|happen|start)\s+(?:at\s+|on\s+|to\s+|in\s+the\s+)?(?P<to>.+?)"
                        r"(?:\s+instead)?\s*[?!.]*\s*$")
_SCHEDULE_WORDS = re.compile(r"\b(?:sessions?|practi[cs]e|lessons?|workouts?|runs?|class|plan|schedule|"
                             r"today|tonight|tomorrow|tmrw|yesterday|morning|evening|afternoon|weekend)\b|\d")


def _names_schedule(norm: str) -> bool:
    return bool(_SCHEDULE_WORDS.search(norm) or weekdays_named(norm))


def _question_part(text: str) -> str:
    """The sentence that asks (the last one ending with "?"), else the last clause."""
    asking = [s for s in sentences(text) if s.rstrip().endswith("?")]
    return asking[-1] if asking else _last_clause(text)


def _last_clause(text: str) -> str:
    """The words after the last clause break ("…, maybe I should lower it, what do you think")."""
    return re.split(r"[,.;!…]\s*|\s+(?:but|so|and)\s+", text.strip().rstrip(" .!"))[-1]


def sentences(text: str) -> list[str]:
    return [p for p in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if p.strip()]


# What says a value is new, not told again: "now", "from now on", "instead", "more like", "call it".
_NEW_VALUE = re.compile(r"\b(?:now|anymore|any more|from now on|instead|only|change|lower|reduce|increase|bump|"
                        r"up to|down to|more like|call it|make it)\b")


def _hours_change(text: str, intent) -> float | None:
    """'I can only do 2 hours a week now', 'actually make it 4 hours a week': a new weekly total
    stated with its unit, not a report of time spent."""
    if intent.kind in (intents.REPORT, intents.QUESTION) or (hours := _new_hours(text)) is None:
        return None
    return None if _asked_about(text, HOURS_WITH_UNIT.search) else hours


def _new_hours(text: str, *, weighed: bool = False) -> float | None:
    """A weekly total said with its unit and as new ("now", "lower", "make it"), or None. An amount
    said of one session and of no period ("make the tuesday one 45 minutes instead") is that
    session's length, not the week's. A sentence that weighs (`weighed`: a yes/no question, "maybe I
    should drop to 2 hours?") says the amount as new by asking about it, whatever its verb."""
    if not HOURS_WITH_UNIT.search(text):
        return None
    norm = normalise(text)
    no_period = amount_period(text) == ""
    # Minutes with no period ("is 30 min enough?") are a sitting's length: a week is weighed in hours.
    # A time done asked about ("I did 3 hours this week, is that enough?") reports, it weighs nothing.
    asks_yes_or_no = (weighed and text.rstrip().endswith("?") and not _WH_START.match(norm)
                      and not (no_period and _MINUTES.search(norm))
                      and not intents.said_done(norm) and not intents.said_skipped(norm))
    if not (CORRECTION.match(text) or _NEW_VALUE.search(norm) or asks_yes_or_no):
        return None
    if no_period and _names_a_session(norm):
        return None
    hours = parse_hours(text)
    return float(hours) if hours is not None else None


_MINUTES = re.compile(r"\b(?:minutes?|mins?)\b|\d\s*min\b")
# "one" as a session ("the tuesday one", "that one"), not the number of an amount ("one hour").
_SESSION_ONE = re.compile(r"\bone\b(?!\s*(?:and a half\s*)?(?:hours?|hrs?|h\b|minutes?|mins?))")


def _names_a_session(norm: str) -> bool:
    """The words name a session: by a word for one (not "it": "make it 4 hours" is the week), by its
    day, or as "the … one"."""
    return bool(any(m.group(0) not in ("it", "one") for m in _SESSION_WORD.finditer(norm))
                or weekdays_named(norm) or relative_days(norm) or _SESSION_ONE.search(norm))


def _asked_about(text: str, holds) -> bool:
    """The sentence that holds the value asks about it ("should I bump it up to 2 hours a week?
    feeling good lately"): weighed, not decided, whatever the sentences around it say."""
    return any(sentence.rstrip().endswith("?") and holds(sentence) for sentence in sentences(text))


def _change_weighed(text: str, ctx: ReadContext) -> dict[str, Value]:
    """A new weekly total or best time the learner weighs in a question ("maybe I should lower it to
    3 hours… what do you think?", "should I switch to mornings?"): carried on the question, never
    written from it; the coach offers the change and writes it on a yes (coaching.turn.goal_change)."""
    for clause in sentences(text):
        hours = _new_hours(clause, weighed=True)
        if hours is not None and ctx.holds("weekly_hours", hours):
            # The amount said with its unit is the one the learner has ("4.5 hours feels like a lot,
            # maybe lower it to 3?"): what is weighed is the other amount of the clause, if any.
            said = HOURS_WITH_UNIT.search(clause)
            other = parse_hours(clause[:said.start()] + " " + clause[said.end():]) if said else None
            hours = None if other is None or ctx.holds("weekly_hours", other) else float(other)
        if hours is not None:
            return {"weekly_hours": _v(hours, clause)}
    # A time weighed for a day or a session ("can sunday be in the afternoon instead?") is about
    # that session, not the best time.
    norm = normalise(text)
    when = None if weekdays_named(norm) or relative_days(norm) or _SESSION_WORD.search(norm) else time_correction(text)
    return {"time_of_day": _v(when, text)} if when else {}


_CONFIDENCE_WORD = re.compile(r"\bconfiden|\bsure i can\b")


def _confidence_change(text: str, intent) -> int | None:
    """'my confidence is more like a 7 now', 'feeling way more confident, call it a 9': a new score
    from 1 to 10, said with the confidence it scores (or on a scale of ten) and as new."""
    norm = normalise(text)
    if intent.kind in (intents.REPORT, intents.QUESTION) or asks(text):
        return None
    if not (CONFIDENCE_WITH_SCALE.search(text) or _CONFIDENCE_WORD.search(norm)):
        return None
    if not (CORRECTION.match(text) or _NEW_VALUE.search(norm)):
        return None
    return parse_confidence(text)


def plan_values(text: str, ctx: ReadContext) -> dict[str, Value]:
    """Days, a time of day or an hour, a taken time and a sitting's length, from the request and,
    where it names none, from the learner's earlier messages (said at onboarding, say)."""
    request = read_plan_request(text)
    if request.session_minutes is None and (minutes := sitting_minutes(text)):
        request = PlanRequest(**{**request.__dict__, "session_minutes": minutes})
    merged = with_earlier(request, list(ctx.earlier))
    values: dict[str, Value] = {}

    def earlier_of(attr: str) -> int:
        if getattr(request, attr) == getattr(merged, attr):
            return 0
        return next((i + 1 for i, t in enumerate(ctx.earlier) if getattr(read_plan_request(t), attr) is not None), 1)

    if merged.days is not None:
        values["days"] = _v(tuple(DAY_CODES[d] for d in sorted(merged.days)), text, earlier_of("days"))
        if merged.days_ruled_out:
            values["days_ruled_out"] = _v(True, text, earlier_of("days"))
    if merged.hour is not None:
        values["time"] = _v(f"{merged.hour:02d}:{merged.minute:02d}", text)
    if merged.best_time:
        values["time_of_day"] = _v(merged.best_time, text)
    if merged.busy_time:
        values["busy_time"] = _v(merged.busy_time, text, earlier_of("busy_time"))
    if merged.session_minutes:
        values["session_minutes"] = _v(merged.session_minutes, text, earlier_of("session_minutes"))
    if merged.unplaced:
        values["unplaced"] = _v(merged.unplaced, merged.unplaced)
    return values


_ONE_SITTING = re.compile(r"\b(\d{1,3})\s*-?\s*(?:min|mins|minutes?)\b(?:\s+(?:long\s+)?)?(?:\w+\s+)?"
                          r"(?:session|practice|lesson|workout|run|block|sitting|slot)\b"
                          r"|\b(?:an?|one)\s+(hour)(?:-long)?\s+(?:session|practice|lesson|workout|block|slot)\b")


def sitting_minutes(text: str) -> int | None:
    """A sitting's length named with the sitting ("a 30 minute practice", "an hour session")."""
    if minutes := session_minutes(text):
        return minutes
    match = _ONE_SITTING.search(normalise(text))
    if not match:
        return None
    minutes = 60 if match.group(2) else int(match.group(1))
    return minutes if 5 <= minutes <= 180 else None


def _move(text: str, ctx: ReadContext, intent) -> Reading:
    """A request to move a session: which one (the source) and where to (the target)."""
    norm = normalise(text).rstrip("?!. ")
    target = _TARGET.search(norm)
    source_part, target_part = (norm[:target.start()], target.group(1)) if target else (norm, "")
    # Where to ends with its sentence: "push tonight's to tomorrow? date night lol" goes tomorrow, not at night.
    target_part = re.split(r"[?!;]|\.\s", target_part, maxsplit=1)[0]
    values: dict[str, Value] = {}
    if session := session_named(source_part, ctx):
        values["session"] = session
    days = days_in(target_part, ctx) if target_part else ()
    if not target_part:
        named = days_in(norm, ctx)
        # one day named and no session on it: that day is where to, not which
        if (named and not any(s.day == named[-1] for s in ctx.plan) and "session" in values) or len(named) > 1:
            days = named[-1:]
    if days:
        values["days"] = _v(days, target_part or text)
    if target_part:
        request = read_plan_request(target_part)
        if request.hour is not None:
            values["time"] = _v(f"{request.hour:02d}:{request.minute:02d}", target_part)
        elif request.best_time:
            values["time_of_day"] = _v(request.best_time, target_part)
        else:
            # "move it to 8pm", "move the 6pm one to 8": a clock time with no "at" before it, or an
            # hour alone, read near the session it moves (20:00). "8:30" with no session to be near
            # is morning or evening: the coach asks.
            near = _ref(values.get("session"), ctx)
            hour = _BARE_HOUR.fullmatch(target_part.strip())
            clock = clock_time(f"{hour.group(1)}:00" if hour else target_part, near=near)
            if clock and (near is not None or int(clock[:2]) >= 12 or re.search(r"\bam\b", target_part)):
                values["time"] = _v(clock, target_part)
    return Reading(MOVE, values, cue=intent.cue or "asks to move a session")


_BARE_HOUR = re.compile(r"(?:at\s+)?(1[0-2]|[1-9])")


def day_mentions(text: str, ctx: ReadContext) -> list[tuple[str, int]]:
    """Each day the text names (a weekday, or today or tomorrow as a weekday), with where it is said."""
    found = [(DAY_CODES[i], match.start()) for i, match in weekdays_named(text)]
    if ctx.today is not None:
        found += [(DAY_CODES[(ctx.today + timedelta(days=offset)).weekday()], match.start())
                  for offset, match in relative_days(text) if offset >= 0]
    return sorted(found, key=lambda mention: mention[1])


def days_in(text: str, ctx: ReadContext) -> tuple[str, ...]:
    """The days the text names, each once, in the order it says them."""
    return tuple(dict.fromkeys(code for code, _ in day_mentions(text, ctx)))


# "the next one", "my upcoming session": the first session still to come ("the next few weeks" is none).
_NEXT_SESSION = re.compile(r"\b(?:next|upcoming)\s+(?:one|session|practice|lesson|class|workout|run|swim|slot)\b")


def _ref(value: Value | None, ctx: ReadContext) -> SessionRef | None:
    return next((s for s in ctx.plan if value is not None and s.ref == value.value), None)


def upcoming_session_named(text: str, ctx: ReadContext) -> SessionRef | None:
    """The one session still to come the words name: the only one on the one day they name, or
    the next one when they say "next"; None otherwise."""
    ahead = sorted((s for s in ctx.plan if s.status == "planned" and not s.past), key=lambda s: s.start)
    days = days_in(text, ctx)
    if not days and _NEXT_SESSION.search(normalise(text)):
        return ahead[0] if ahead else None
    on_day = [s for s in ahead if s.day in days]
    return on_day[0] if len(days) == 1 and len(on_day) == 1 else None


def session_named(text: str, ctx: ReadContext) -> Value | None:
    """The one planned session the words name (by its day, "tonight's", "tomorrow's", "the next
    one"), or the only planned session when the words name none. Words naming no day but what
    became of it ("the one I skipped") name among the sessions it became of. None when none or
    several fit: the coach asks."""
    days = days_in(text, ctx)
    norm = normalise(text)
    if not days and (upcoming := upcoming_session_named(text, ctx)):  # "the next one"
        return _v(upcoming.ref, text)
    if not days and (at := clock_time(text)):
        # "the 7pm one": the one planned session at that time.
        at_time = [s for s in ctx.plan if s.status == "planned" and f"{s.start:%H:%M}" == at]
        if len(at_time) == 1:
            return _v(at_time[0].ref, text)
    if not days and intents.said_skipped(norm) and not intents.said_done(norm):
        planned = [s for s in ctx.plan if s.status in ("skipped", "missed")]
    else:
        planned = [s for s in ctx.plan if s.status == "planned"]
    fits = [s for s in planned if s.day in days] if days else (planned if len(planned) == 1 else [])
    return _v(fits[0].ref, text) if len(fits) == 1 else None


def report_reading(text: str, ctx: ReadContext, intent) -> Reading:
    norm = re.sub(r"\s+", " ", text.strip().lower().replace("’", "'"))
    if intents.said_done(norm) and intents.said_skipped(norm):
        # "I did the monday one but skipped wednesday": two outcomes; the coach asks, one at a time.
        return Reading(REPORT, _concern(text), cue="reports sessions with different outcomes")
    values: dict[str, Value] = {"outcome": _v(intent.outcome, intent.cue)}
    days = days_in(norm, ctx)
    if len(days) > 1:
        fits = [[s for s in ctx.reportable() if s.day == d] for d in days]
        if all(len(f) == 1 for f in fits):
            values["sessions"] = _v(tuple(f[0].ref for f in fits), text)
        return Reading(REPORT, {**values, **_concern(text)}, cue=f"reports {len(days)} days' sessions")
    if ctx.today is not None and ctx.plan:
        newest_first = sorted(ctx.reportable(), key=lambda s: s.start, reverse=True)
        tz = newest_first[0].start.tzinfo if newest_first else None
        targets, ambiguous = intents.report_targets(intent, newest_first, tz=tz, today=ctx.today)
        if len(targets) == 1 and not ambiguous:
            values["session"] = _v(targets[0].ref, intent.cue)
        elif len(targets) > 1 and not ambiguous:  # "did both"
            values["sessions"] = _v(tuple(t.ref for t in targets), intent.cue)
    return Reading(REPORT, {**values, **_concern(text)}, cue=f"reports a {intent.outcome} session ({intent.cue!r})")


# A clock time as a proposal or a move's target says it: "7:30", "8pm", "20h".
_CLOCK_SAID = re.compile(r"\b(\d{1,2})(?:[:h.](\d{2}))?\s*(am|pm|h\b)?")


def clock_time(span: str, near: SessionRef | None = None) -> str | None:
    """The clock time of `span`. Said without am/pm ("bump thursday to 7:30"), an hour from 1 to 11
    is the one of its two readings nearer the session it moves (19:30 for an evening session), never
    the small hours ("the 08:00 one to 3" is 15:00: nobody studies at 3 am unless they say am); as
    near one as the other ("the 10:00 one to 4"), the afternoon."""
    match = _CLOCK_SAID.search(span.lower())
    if not match or not (match.group(2) or match.group(3)):
        return None
    hour = int(match.group(1))
    if match.group(3) == "pm" and hour < 12:
        hour += 12
    if match.group(3) == "am" and hour == 12:
        hour = 0
    if match.group(3) is None and 1 <= hour <= 11 and not match.group(1).startswith("0") and near is not None:
        now = near.start.hour + near.start.minute / 60
        hour = min((hour, hour + 12), key=lambda h: (h < 5, abs(h + int(match.group(2) or 0) / 60 - now), h < 7))
    return f"{hour:02d}:{match.group(2) or '00'}" if hour < 24 else None


def session_refs(sessions, *, tz, now) -> tuple[SessionRef, ...]:
    """The plan as readers see it (the turn builds the context with this)."""
    return tuple(SessionRef(ref=str(s.pk), start=s.planned_start.astimezone(tz), minutes=s.duration_minutes,
                            status=s.status, past=s.planned_start <= now) for s in sessions)
