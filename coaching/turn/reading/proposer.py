"""A model's proposal of what a message does, in constrained output that can only point: the act
from a fixed list, and for each value the learner's own words (a quote), never a value of the
model's making. Code settles the proposal (coaching.turn.reading.settle): a quote that is not in
the learner's words is dropped, and every number, day and time is parsed from the quote by code.

Asked only when the rules cannot settle a message (coaching.turn.reading.reader). One call through
the model layer, so it is a telemetry row like every other model call. The prompt's examples are
the author's own and none is taken from the labelled sets that measure the reader
(evaluation/data/reading_v1.json and reading_v2.json, written separately for variety)."""

from __future__ import annotations

import json
import time

from coaching.models import OnboardingStep
from coaching.turn.reading.types import (
    ACTS,
    ANSWER,
    CANCEL,
    CHANGE,
    MOVE,
    PLAN,
    REPORT,
    Proposal,
    ReadContext,
    SessionRef,
)
from core.llm import chat, job_model
from core.llm.types import LLMError

_QUESTION_OF_STEP = {
    OnboardingStep.GOAL: "What would you like to learn or get better at?",
    OnboardingStep.CATEGORY: "Which area is your goal in: language, programming, career, school/exams, music, art, "
                             "sport/fitness or other?",
    OnboardingStep.WEEKLY_HOURS: "How many hours a week can you spend on it?",
    OnboardingStep.BEST_TIME: "What time of day suits you best?",
    OnboardingStep.CONFIDENCE: "From 1 to 10, how confident are you that you can keep this up?",
}
# The quotes each context may ask for: only what code can take there (coaching.turn.reading.settle
# takes a goal only as the answer to the goal question), so the output stays short.
_SLOTS_AT_STEP = {
    OnboardingStep.GOAL: ("goal", "hours", "time_of_day"),
    OnboardingStep.CATEGORY: ("category",),
    OnboardingStep.WEEKLY_HOURS: ("hours", "time_of_day"),
    OnboardingStep.BEST_TIME: ("time_of_day", "hours"),
    OnboardingStep.CONFIDENCE: ("confidence",),
}
_CATEGORIES = ("language", "programming", "career", "academic", "music", "art", "sport", "other")

SYSTEM = """You read one message a learner sent to their study coach and say what it does. You never answer it.
Acts:
- answer: answers the coach's question (or picks one of the options offered)
- report: says a study session happened or did not happen
- question: asks the coach something
- plan: asks for new sessions or a plan
- move: asks to move an existing session to another time
- cancel: asks to cancel an existing session
- change: changes something said before (goal, hours, time of day)
- undo: takes back what the coach just did
- small_talk: only a greeting, thanks or filler
- other: anything else (news, feelings, off-topic)
Values are QUOTES: copy the learner's exact words, in their language, or leave the key out. Never translate, never
invent, never fill a value the message does not state. "lang" is the message's language code (en, pt, es, fr, de…).
Reply with JSON only."""

# Generic examples of the output shape (not from any evaluation set).
_EXAMPLES = (
    ('Coach asked: What would you like to learn or get better at?\nLearner: ok so basically i want to get '
     'into woodworking, maybe an hour on sundays',
     {"act": "answer", "goal": "get into woodworking", "hours": "an hour on sundays", "lang": "en"}),
    ('Coach asked: nothing pending.\nPlan: Tue 18:00 (30 min)\nLearner: could we shift tuesday\'s one to '
     'wednesday evening',
     {"act": "move", "session": "tuesday's one", "target": "wednesday evening", "lang": "en"}),
)


# The quotes each act can carry after onboarding: a report says which session, a move which and
# where to, and so on. The schema offers one branch per act, so once the act is decoded the model can
# only fill that act's keys: a "report" cannot carry a move's target copied from an example.
_SLOTS_OF_ACT = {
    # A report carries no quote: code reads its session from the words or takes the only one due,
    # and its outcome from the words. A quoted session changed no reading of the labelled set and
    # made the reports' proposals longer to decode (docs/coach-quality.md, "Thirteenth run").
    REPORT: (),
    MOVE: ("session", "target"),
    CANCEL: ("session",),
    PLAN: ("target", "minutes", "hours", "time_of_day"),
    CHANGE: ("hours", "time_of_day"),
    ANSWER: ("target", "minutes", "hours", "time_of_day"),
}


def _schema(slots: tuple[str, ...], ctx: ReadContext) -> dict:
    """During onboarding one object (the act and the step's quotes). After it, one branch per act
    (JSON schema `anyOf`): an act's branch holds only the keys it can carry; acts that carry no
    value (question, small talk, other, undo) share one branch with the language alone."""
    # The language the model names is not used (code tells it, `language.language_of`); the key
    # stays because without it the 0.5B's quotes changed and two goals were written from messages
    # that state none (docs/coach-quality.md, "Thirteenth run").
    typed: dict = {"lang": {"type": "string", "maxLength": 5}}  # keys that are not free quotes
    if "category" in slots:
        typed["category"] = {"type": "string", "enum": list(_CATEGORIES)}
    if ctx.options:
        typed["option"] = {"type": "string", "enum": [o["label"] for o in ctx.options] + ["none"]}

    def branch(acts: list[str], keys: tuple[str, ...]) -> dict:
        # In the order of the examples (the language last): the grammar makes the keys come in this order.
        props: dict = {"act": {"type": "string", "enum": acts}}
        for key in keys:
            props[key] = typed.get(key, {"type": "string", "maxLength": 160})
        props["lang"] = typed["lang"]
        return {"type": "object", "properties": props, "required": ["act"], "additionalProperties": False}

    if ctx.step != OnboardingStep.DONE:
        # During onboarding, one object: the values answer (or correct) the question asked.
        return branch(list(ACTS), slots)
    carrying = dict(_SLOTS_OF_ACT)
    if ctx.options:
        carrying[ANSWER] = ("option", *carrying[ANSWER])
    bare = [act for act in ACTS if act not in carrying]
    return {"anyOf": [branch([act], keys) for act, keys in carrying.items()] + [branch(bare, ())]}


def _situation(ctx: ReadContext) -> str:
    lines = []
    if ctx.step != OnboardingStep.DONE:
        lines.append(f"Coach asked: {_QUESTION_OF_STEP.get(ctx.step, '')}")
    elif ctx.options:
        lines.append("Coach offered: " + "; ".join(f"{o['label']}: {o.get('summary', '')}" for o in ctx.options))
    elif ctx.asked:
        lines.append(f"Coach asked: {ctx.asked}")
    elif len(due := [s for s in ctx.plan if _unreported(s)]) == 1:
        # The one session over and not reported is what the check-in will ask about: said as what
        # the coach waits to hear, the 0.5B reads "fiz a sessão de hoje" as the report it is. (Not
        # a session marked missed: counting those too cost the labelled set a move read as a
        # question, docs/coach-quality.md "Thirteenth run".)
        lines.append(f"Coach is waiting to hear how the {due[0].start:%a %H:%M} session went.")
    else:
        lines.append("Coach asked: nothing pending.")
    if ctx.plan:
        # A past session still "planned" is one the learner has not said anything about yet.
        lines.append("Plan: " + ", ".join(f"{s.start:%a %H:%M} ({s.minutes} min, {_status(s)})" for s in ctx.plan[:6]))
    return "\n".join(lines)


def _unreported(session: SessionRef) -> bool:
    return session.past and session.status == "planned"


def _status(session: SessionRef) -> str:
    return "past, not reported" if _unreported(session) else session.status


def propose(text: str, ctx: ReadContext, *, model: str | None = None) -> Proposal:
    """One constrained call. A model error is a proposal with `error` set (the rules' reading stands)."""
    slots = _SLOTS_AT_STEP.get(ctx.step, ())
    messages = [{"role": "system", "content": SYSTEM}]
    for shown, answer in _EXAMPLES:
        messages += [{"role": "user", "content": shown}, {"role": "assistant", "content": json.dumps(answer)}]
    messages.append({"role": "user", "content": f"{_situation(ctx)}\nLearner: {text[:600]}"})
    start = time.perf_counter()
    try:
        result = chat(messages, schema=_schema(slots, ctx), model=model or job_model("reading"),
                      options={"max_tokens": 80, "temperature": 0.0, "seed": 7}, operation="chat")
    except (LLMError, ValueError) as exc:
        return Proposal(act="", quotes={}, ms=_ms(start), error=type(exc).__name__)
    parsed = result.parsed if isinstance(result.parsed, dict) else {}
    quotes = {k: str(v) for k, v in parsed.items()
              if k != "act" and isinstance(v, str | int | float) and str(v).strip()}
    return Proposal(act=str(parsed.get("act", "")), quotes=quotes, ms=_ms(start))


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)
