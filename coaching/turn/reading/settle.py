"""Code settles a model's proposal: a quote counts only if it is the learner's words (in this message
or an earlier one), each value is parsed from the quote by the same code that reads the rules'
values, and is checked (range, type, not a greeting or a request as a goal). What fails is
dropped and said in `Reading.rejected`; the act is kept only where the context allows it.
Pure: no database, no model."""

from __future__ import annotations

import re
from dataclasses import replace

from coaching.models import OnboardingStep
from coaching.onboarding.answers import is_bare_question, up_to_pictograph
from coaching.onboarding.small_talk import is_greeting, is_small_talk, strip_greeting
from coaching.onboarding.values import (
    denied,
    hours_with_rate,
    parse_best_time,
    parse_confidence,
    parts_of_day_named,
    says_time_amount,
)
from coaching.turn.reading import intent as intents
from coaching.turn.reading.language import ENGLISH, language_of, looks_foreign
from coaching.turn.reading.rules import (
    asks,
    clock_time,
    day_mentions,
    days_in,
    goal_stands,
    report_reading,
    requests_plan,
    sentences,
    session_named,
    sitting_minutes,
    upcoming_session_named,
    whole_goal,
)
from coaching.turn.reading.types import (
    ACTS,
    ANSWER,
    CANCEL,
    CHANGE,
    MOVE,
    OTHER,
    PLAN,
    QUESTION,
    REPORT,
    UNDO,
    WRITTEN_SLOTS,
    Proposal,
    ReadContext,
    Reading,
    SessionRef,
    Value,
)
from coaching.turn.reading.vocabulary import PAST_VERB, misspelt, negated, normalise, says_yes


def locate(quote: str, text: str, earlier: tuple[str, ...] = ()) -> tuple[str, int] | None:
    """(the learner's own words for `quote`, which message: 0 this one, n the n-th earlier), or None
    when the quote is not there. Case, spacing and surrounding punctuation may differ; so may the
    spelling of a word, where the model quoted a misspelt word spelt right (`_aligned`). A quote
    that runs on past the learner's words into the context it was shown ("quarta às 7h (60 min,
    planned)") is cut back, at the comma or bracket where it runs on, to the part that is theirs."""
    found = _located(quote, text, earlier)
    cut = quote
    while found is None and (run_on := _RUN_ON.search(cut)):
        cut = cut[:run_on.start()]
        found = _located(cut, text, earlier)
    return found


# Where a quote runs on: the last comma, semicolon or opening bracket with words before it.
_RUN_ON = re.compile(r"\s*[,;(][^,;(]*$")


def _located(quote: str, text: str, earlier: tuple[str, ...]) -> tuple[str, int] | None:
    wanted = normalise(quote).strip(" \"'“”.,!?")
    if len(wanted) < 1:
        return None
    # Whole words only: "music" is not in "musica".
    pattern = re.compile(r"(?<!\w)" + re.escape(wanted).replace(r"\ ", r"\s+") + r"(?!\w)")
    for index, source in enumerate((text, *earlier)):
        if match := pattern.search(source.lower().replace("’", "'")):
            return source[match.start():match.end()], index
    for index, source in enumerate((text, *earlier)):
        if span := _aligned(wanted, source):
            return span, index
    return None


_TOKEN = re.compile(r"[\w'’]+")


def _aligned(wanted: str, source: str) -> str | None:
    """The run of the learner's words that the quote copies word for word, each word the same or
    misspelt in one of them (`vocabulary.misspelt`), at least three words: the learner's own span, or None."""
    quoted = _TOKEN.findall(wanted)
    said = list(_TOKEN.finditer(source))
    if len(quoted) < 3:
        return None
    for start in range(len(said) - len(quoted) + 1):
        window = said[start:start + len(quoted)]
        if all(misspelt(w.group(0), q) for w, q in zip(window, quoted, strict=True)):
            return source[window[0].start():window[-1].end()]
    return None


# "hello :) I'm Ana": a greeting and a name, no goal.
_INTRODUCTION = re.compile(r"(?i)(?:i'?m|i am|my name is|this is|call me)\s+[\w'-]+")


def _goal(span: str, why: list[str]) -> str | None:
    span = up_to_pictograph(span)  # "nadar mejor 🏊": the words, not the emoji after them
    words = re.findall(r"[^\W\d_]{2,}", span)
    if is_small_talk(span):
        why.append("goal: small talk")
    elif _INTRODUCTION.fullmatch(re.sub(r"[^\w\s']+", " ", strip_greeting(span)).strip()):
        why.append("goal: an introduction")
    elif not words:
        why.append("goal: no words")
    elif (intents.parse_intent(span).kind in (intents.RESCHEDULE, intents.UNDO) or requests_plan(span)
          or is_bare_question(span)):
        why.append("goal: a request or a question")
    elif len(span) > 300:
        why.append("goal: too long")
    else:
        return span.strip(" ,.!?")
    return None


def _in_greeting(span: str, source: str) -> bool:
    """The span stands in the greeting the message opens with ("Good morning! I've been meaning to …")."""
    body = strip_greeting(source)
    greeting = source.strip()[:len(source.strip()) - len(body)]
    return bool(greeting) and span.lower() in greeting.lower()


def _session_meant(values: dict[str, Value], text: str, ctx: ReadContext) -> SessionRef | None:
    """The planned session a move acts on: the one settled from the proposal, else the one the
    message's own words name (by its day, or the only one planned)."""
    ref = values["session"].value if "session" in values else getattr(session_named(text, ctx), "value", None)
    return next((s for s in ctx.plan if s.ref == ref), None)


# Acts a proposal may name during onboarding other than an answer. A small model often names one of
# them for a plain answer while quoting the answer itself right; code then decides the act (`settle`).
_NOT_AN_ANSWER = (QUESTION, PLAN, REPORT, MOVE, CANCEL)
# What an answer during onboarding may carry: a profile value, or a goal said back before it is stored.
_ANSWERED = (*WRITTEN_SLOTS, "gloss")



def tells_what_happened(text: str) -> bool:
    """The words say something happened, or did not: a verb in the past, a done or skip word, a no.
    Unless the words are told to be English ("gedaan!" is too short to tell), the rules cannot
    say, and the proposal stands."""
    norm = normalise(text)
    if language_of(text) != ENGLISH:
        return True
    return bool(PAST_VERB.search(norm) or intents.said_done(norm) or intents.said_skipped(norm) or negated(norm)
                or says_yes(norm) or re.search(r"\d+\s*(?:min|mins|minutes|h|hrs?|hours?|km|k)\b", norm))


def settle(proposal: Proposal, text: str, ctx: ReadContext) -> Reading:
    """The proposal settled against the learner's words and the context. During onboarding the coach
    has asked a question: a message that asks nothing back and carries a value code accepts for it
    answers it, whatever act the model named (the values point at the words; the act is code's)."""
    if ctx.step != OnboardingStep.DONE and proposal.act in _NOT_AN_ANSWER and not asks(text):
        answer = _settle(replace(proposal, act=ANSWER), text, ctx)
        if answer.act == ANSWER and any(slot in answer.values for slot in _ANSWERED):
            return replace(answer, cue=f"model proposed {proposal.act}; the words answer the question asked")
    return _settle(proposal, text, ctx)


def _settle(proposal: Proposal, text: str, ctx: ReadContext) -> Reading:
    why: list[str] = []
    act = proposal.act if proposal.act in ACTS else OTHER
    if act == ANSWER and ctx.step == OnboardingStep.DONE and not ctx.options:
        act = OTHER  # nothing was asked: an "answer" answers nothing
    if act == UNDO and not ctx.undoable:
        act = OTHER
    values: dict[str, Value] = {}

    def put(slot: str, value, span: str, where: int) -> None:
        values[slot] = Value(value=value, span=span, source="model", earlier=where)

    # The session first: where it moves to is read against it (`_clock`).
    for slot, quote in sorted(proposal.quotes.items(), key=lambda item: item[0] != "session"):
        if slot in ("option", "outcome", "category"):
            continue  # enums: settled below against the context
        if slot == "lang":
            continue  # code tells the language (reader.read); the model's code is not taken
        # Which session a message acts on, and where to, is named in the message itself; so is an
        # onboarding answer ("yes please" at the goal question took "evening" from a plan request
        # the coach had turned down two messages before).
        own_words_only = slot in ("session", "target") or ctx.step != OnboardingStep.DONE
        found = locate(quote, text, () if own_words_only else ctx.earlier)
        if found is None:
            why.append(f"{slot}: not the learner's words ({quote[:40]!r})")
            # (Proposed as a "change" too: with no goal stored yet there is nothing else to change.)
            at_goal = act in (ANSWER, CHANGE) and ctx.step == OnboardingStep.GOAL
            if slot == "goal" and at_goal and looks_foreign(text) and (gloss := _goal(quote, why)):
                # A goal given in another language, which the model rendered in English: nothing
                # is stored from it; the coach says what it understood and asks (onboarding turn).
                put("gloss", gloss, text, 0)
            continue
        span, where = found
        source = ctx.earlier[where - 1] if where else text  # the message the quote was found in
        if slot == "goal":
            # A goal is taken from a proposal only as the answer to the goal question; a change of
            # goal later is a write the rules must read ("actually, my goal is …").
            if act == ANSWER and ctx.step == OnboardingStep.GOAL and (goal := _goal(span, why)):
                # A few words the rules know no verb or area for ("touch typing") are stored once
                # the model quotes them too; a longer goal the rules could not stand behind (a
                # clause more), or a goal in another language, is said back and stored only once the
                # learner says it is right.
                agreed_short = len(goal.split()) <= 4 and whole_goal(goal, text)
                if looks_foreign(text) or not (goal_stands(goal, text) or agreed_short):
                    why.append(f"goal: {goal[:40]!r} is said back and asked about before it is stored")
                    put("gloss", goal, span, where)
                else:
                    put("goal", goal, span, where)
            elif act != ANSWER or ctx.step != OnboardingStep.GOAL:
                why.append("goal: only an answer to the goal question")
        elif slot == "hours":
            hours = hours_with_rate(span, next((c for c in sentences(source) if span in c), span))
            if hours is not None and ctx.step != OnboardingStep.WEEKLY_HOURS and not says_time_amount(span):
                why.append(f"hours: no unit of time in {span!r} outside the hours question")
            elif hours is None:
                why.append(f"hours: code cannot read a weekly amount from {span!r}")
            else:
                put("weekly_hours", float(hours), span, where)
        elif slot == "minutes":
            if minutes := sitting_minutes(span):
                put("session_minutes", minutes, span, where)
        elif slot == "time_of_day":
            if is_small_talk(span) or is_greeting(span) or _in_greeting(span, source):
                why.append(f"time_of_day: a greeting ({span!r})")
            elif denied(span, source):
                why.append(f"time_of_day: said as not wanted ({span!r})")
            elif ctx.step != OnboardingStep.DONE and len(parts := parts_of_day_named(source)) > 1:
                # "weekdays evening, weekend morning": two answers to one question; asked again.
                why.append(f"time_of_day: the message names {len(parts)} parts of the day")
            elif when := parse_best_time(span):
                put("time_of_day", when, span, where)
        elif slot == "confidence":
            confidence = parse_confidence(span)
            if confidence is None:
                why.append(f"confidence: not a number from 1 to 10 in {span!r}")
            else:
                put("confidence", confidence, span, where)
        elif slot == "session":
            if (ref := session_named(span, ctx)) is not None:
                put("session", ref.value, span, where)
            elif ctx.plan and (named := days_in(span, ctx)) and not any(s.day in named for s in ctx.plan):
                # "the saturday one" with no Saturday session: said back, and the coach asks which.
                put("session_not_planned", named, span, where)
        elif slot == "target":
            if act not in (MOVE, PLAN):
                why.append(f"target: a {act} moves nothing to another time")
                continue
            moved = _session_meant(values, text, ctx)
            if act == MOVE and moved is None and where == 0:
                # The words that say where it goes do not say which session: the rest of the message
                # does ("can we move thursday's to friday": Thursday's, read without "to friday").
                ref = getattr(session_named(text.replace(span, " "), ctx), "value", None)
                moved = next((s for s in ctx.plan if s.ref == ref), None)
            if act == MOVE and moved is not None and "session" not in values:
                put("session", moved.ref, text, 0)  # named by its day in this message ("di lunedì a martedì")
            days = days_in(span, ctx)
            if moved is not None and len(days) > 1:
                # A quote that runs from the session's day to the new one: it goes to the new one.
                days = tuple(d for d in days if d != moved.day)
            if days:
                put("days", days, span, where)
            if clock := clock_time(span, moved):
                put("time", clock, span, where)
            elif when := parse_best_time(span):
                put("time_of_day", when, span, where)
    target_refused = any(reason.startswith("target: not the learner's words") for reason in why)
    if act == MOVE and "session_not_planned" in values and "days" not in values and "time" not in values:
        # The session the words name is not planned; the one other day they name is where it was to go.
        others = {code for code, _ in day_mentions(text, ctx)} - set(values["session_not_planned"].value)
        if len(others) == 1:
            put("days", tuple(others), text, 0)
    if act != MOVE:
        values.pop("session_not_planned", None)
    if act == CANCEL and "session" not in values and (named := upcoming_session_named(text, ctx)) is not None:
        # The model's quote of which session did not point (it translated it), but the message's own
        # words name one to come by its day ("cancela la del sábado", "usuń piątkową sesję").
        put("session", named.ref, text, 0)
    if act == CANCEL and "session" in values and any(s.ref == values["session"].value and s.past for s in ctx.plan):
        # Only a session still to come can be cancelled: a quote that resolves to one already over
        # ("knocked out a bunch of puzzles earlier", proposed as a cancel) points at nothing to cancel.
        why.append("session: a cancel of a session already over")
        values.pop("session")
    if act == CHANGE:
        values.pop("session", None)  # a change is of the goal, the hours or the time of day: of no session
        held = [slot for slot in values if ctx.holds(slot, values[slot].value)]
        for slot in held:
            why.append(f"{slot}: {values.pop(slot).value!r} is the value already held, no change")
        if held and not any(slot in WRITTEN_SLOTS for slot in values):
            # A preference said again ("I prefer studying in the evening", the evening already
            # stored) changes nothing: it is a statement like any other, read and remembered.
            act = OTHER
    if act == CHANGE and set(values) == {"time_of_day"} and (session := upcoming_session_named(text, ctx)):
        # A time of day for a session the words name by its day ("can we make tuesday's a morning
        # one?") moves that session: the profile's best time is the learner's in general, not one
        # day's. The move is asked about before it is made (a model's reading).
        act = MOVE
        put("session", session.ref, text, 0)
        said = values["time_of_day"]
        if clock := clock_time(said.span, session):
            # "make it 2pm": the time said, not the part of the day it falls in.
            del values["time_of_day"]
            put("time", clock, said.span, said.earlier)
    if act == MOVE and target_refused and "days" not in values and "time" not in values:
        # The model's "to where" was refused (not the learner's words: it translated them), but the
        # words name the session's day and one other: that other day is where it goes, at the time
        # of day said after it ("de sexta pra domingo de manhã").
        moved = _session_meant(values, text, ctx)
        named = [(code, at) for code, at in day_mentions(text, ctx) if moved is None or code != moved.day]
        if moved is not None and len({code for code, _ in named}) == 1:
            if "session" not in values:
                put("session", moved.ref, text, 0)
            after = text[named[0][1]:]
            put("days", (named[0][0],), after, 0)
            if when := parse_best_time(after):
                put("time_of_day", when, after, 0)
    labels = [o["label"] for o in ctx.options]
    if (option := proposal.quotes.get("option")) and (option in labels or option == "none") and act == ANSWER:
        put("option", option, text, 0)
    if act == REPORT and ctx.step == OnboardingStep.DONE:
        # The model points at a report; whether the session happened is read from the words by code
        # (a no or a not is a skip), and which session it was is found by code as for the rules'
        # reports: the day or session named, else the only one not yet reported. The turn asks
        # before it writes a report only the model read (Reading.proposed).
        norm = normalise(text)
        outcome = intents.outcome_said(norm)
        reference, weekday, count = intents.reference_in(norm)
        said = intents.Intent(REPORT, outcome=outcome, reference=reference, weekday=weekday, count=count, cue=text)
        found = report_reading(text, ctx, said).values
        quoted = values.pop("session", None)  # the session the model quoted, settled above
        if not ctx.reportable():
            # Nothing is due a report: the model's guess ("had my first conversation in Portuguese
            # today") has no session to point at, and news is not a check-in.
            why.append("outcome: no session is due a report")
            found = {}
        elif not tells_what_happened(text):
            # "honestly idk if i can keep this up, work is crushing me": nothing in the words says
            # what happened (no verb in the past, no done or not); worry about what comes is no
            # check-in, and the coach is not to offer to log it as done.
            why.append("outcome: the words tell nothing that happened")
            found = {}
            act = OTHER
        elif "sessions" in found:
            # Several sessions in one message ("thursday: done. saturday: nope"): one outcome read from
            # the whole message may fit only some of them; the check-in asks, one at a time.
            why.append("outcome: several sessions named, the outcome of each not known")
            found = {}
        elif (set(found) == {"outcome"} and quoted is not None
              and any(s.ref == quoted.value and s.past for s in ctx.plan)):
            found = {**found, "session": quoted}  # no session from the words; the quote names one that is over
        values.update({k: Value(value=v.value, span=v.span, source="model", earlier=0)
                       for k, v in found.items() if k in ("outcome", "session")})
    if (category := proposal.quotes.get("category")) and ctx.step == OnboardingStep.CATEGORY and act == ANSWER:
        put("category", category, text, 0)
    if act == ANSWER and asks(text) and not values:
        act = "question"
    return Reading(act, values, source="model", cue=f"model proposed {proposal.act or 'nothing'}",
                   settled=not proposal.error, rejected=tuple(why), model_ms=proposal.ms)
