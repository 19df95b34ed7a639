"""One reading per message: the rules read it; where they cannot settle it, a model proposes (it can
only point at the learner's words) and code settles the proposal. The turn calls `read` once and
passes the Reading down; nothing after it parses the message again.

Modes (for `manage.py evaluate_reading`, which measures them side by side): "rules" (the rules
alone), "model" (the model's settled proposal for every message) and "combined" (the default)."""

from __future__ import annotations

from dataclasses import replace

from coaching.models import OnboardingStep
from coaching.turn.reading.language import ENGLISH, language_of
from coaching.turn.reading.proposer import propose
from coaching.turn.reading.rules import asks, read_by_rules, sentences
from coaching.turn.reading.settle import settle
from coaching.turn.reading.types import ANSWER, OTHER, PLAN, QUESTION, REPORT, SMALL_TALK, ReadContext, Reading, Value
from coaching.turn.reading.vocabulary import PLAN_WORDS

COMBINED, RULES, MODEL = "combined", "rules", "model"
# Acts a proposal may settle without a value; any other act must point at the learner's words
# through a value code accepted (a session, a day, a time, a length), or the rules' reading stays; a
# request for a plan may point at the word for a plan (vocabulary.PLAN_WORDS).
_WITHOUT_VALUES = (QUESTION, SMALL_TALK, OTHER, "undo")


def read(text: str, ctx: ReadContext, *, mode: str = COMBINED, model: str | None = None) -> Reading:
    reading = _read(text, ctx, mode=mode, model=model)
    if (lang := language_of(text)) not in (None, ENGLISH):
        # Said in another language: the coach answers in English and says so (code tells the
        # language; the model is not asked).
        reading = replace(reading, values={**reading.values, "lang": Value(value=lang, span="", source="rules")})
    return reading


def _read(text: str, ctx: ReadContext, *, mode: str, model: str | None) -> Reading:
    rules = read_by_rules(text, ctx)
    if mode == RULES or (mode == COMBINED and rules.settled):
        return rules
    proposal = propose(text, ctx, model=model)
    if proposal.error:
        # No proposal (the model is down or scripted to say nothing): the rules' reading stands,
        # as it did before there was a model to ask; a report they could not tie to a session is
        # still asked about before it is logged.
        return _reply_to_choice(replace(rules, settled=rules.act != REPORT, rejected=(f"model: {proposal.error}",),
                                        model_ms=proposal.ms), rules, ctx)
    proposed = settle(proposal, text, ctx)
    if mode == MODEL:
        return proposed
    return _reply_to_choice(_combine(rules, proposed, text), rules, ctx)


def _reply_to_choice(reading: Reading, rules: Reading, ctx: ReadContext) -> Reading:
    """With a choice pending ("Option A … or B …?"), a reply neither the rules nor a proposal could
    place ("die kürzere", "whichever you think") is taken as an answer that picks none: the coach
    asks which, instead of talking past the choice it offered."""
    unplaced = reading.act == OTHER and rules.act == OTHER and not rules.settled
    if ctx.options and ctx.step == OnboardingStep.DONE and unplaced:
        return replace(reading, act=ANSWER, values={k: v for k, v in reading.values.items() if k == "concern"},
                       settled=True, cue=f"{reading.cue}; a reply to the choice pending that picks none")
    return reading


def _combine(rules: Reading, proposed: Reading, text: str) -> Reading:
    """The settled proposal where it carries what the act needs; else the rules' reading, unsettled
    (the specialist then asks instead of writing). The proposal does not overrule what code knows
    of the act: an answer the onboarding gate took stays an answer (only its values were in doubt),
    a message that asks is not made a request for new sessions, nor (in one sentence) a report, and a
    report the rules read is not made small talk."""
    usable = {k: v for k, v in proposed.values.items() if k not in ("concern", "about", "gloss")}
    overrules = ((rules.act == ANSWER and rules.gate is not None and rules.gate.accepted and proposed.act != ANSWER)
                 # a report the rules read but could not tie to a session is not made nothing by a
                 # proposal of nothing in particular: the coach asks before it logs it
                 or (rules.act == REPORT and proposed.act in (OTHER, SMALL_TALK))
                 or (proposed.act == PLAN and asks(text))
                 or (proposed.act == REPORT and asks(text) and len(sentences(text)) == 1))
    named_plan = proposed.act == PLAN and bool(PLAN_WORDS.search(text))
    if not overrules and (proposed.act in _WITHOUT_VALUES or usable or named_plan):
        values = {**{k: v for k, v in rules.values.items() if k in ("concern", "about")}, **proposed.values}
        # The rules' values of the same act are kept where the model quoted nothing for them; not
        # the goal they could not stand behind (the reason the model was asked).
        if proposed.act == rules.act:
            kept = {k: v for k, v in rules.values.items() if rules.settled or k != "goal"}
            values = {**kept, **proposed.values}
        return replace(proposed, values=values, source="rules+model", settled=True,
                       cue=f"{proposed.cue}; rules: {rules.cue}", model_ms=proposed.model_ms)
    # A goal to say back is kept as its gloss: the coach asks about it (`read` adds the language).
    gloss = {k: v for k, v in proposed.values.items() if k == "gloss"}
    return replace(rules, values={**rules.values, **gloss}, settled=False, rejected=proposed.rejected,
                   model_ms=proposed.model_ms, cue=f"{rules.cue}; model proposed {proposed.act} without usable values")
