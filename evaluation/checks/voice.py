"""Checks shared with the coaching guard (`coaching/turn/reply_checks.py`), so evaluation counts exactly
what the guard blocks: third person, parroting, refusals, loops, copies of the prompt's example,
the coach speaking as the learner or asking them for tips, an announced guide, an unprompted
greeting, a dangling list opener, and the profile values a turn saved."""

from __future__ import annotations

from coaching.onboarding import texts as onboarding_texts
from coaching.turn import prompts, reply_checks
from evaluation.checks.base import CheckContext, CheckResult, strip_templates


def _shared(hit: str | None) -> CheckResult:
    return CheckResult(flag=hit is not None, value=1.0 if hit else 0.0, detail=hit or "")


def check_third_person(text: str, ctx: CheckContext) -> CheckResult:
    """"The learner reported…", "the user's goal": talking about the learner instead of to them."""
    return _shared(reply_checks.third_person(strip_templates(text, ctx)))


def check_parrot(text: str, ctx: CheckContext) -> CheckResult:
    """A long run of the learner's own message repeated back (≥ 8 words, or most of a short one)."""
    return _shared(reply_checks.parrot(strip_templates(text, ctx), ctx.learner_text))


def check_refusal(text: str, ctx: CheckContext) -> CheckResult:
    """"I'm sorry, but I can't assist with that." to an ordinary coaching message."""
    return _shared(reply_checks.refusal(text))


def check_loop(text: str, ctx: CheckContext) -> CheckResult:
    """The same reply text at least three times in one conversation (templated or not: a learner
    sees a loop either way)."""
    return _shared(reply_checks.loop(text, ctx.previous_replies))


def check_example_copy(text: str, ctx: CheckContext) -> CheckResult:
    """The reply copies the prompt's example exchange ("…around the kids…") where nobody in this
    conversation said it: the shipped exemplars and the retired ones."""
    examples = [*prompts.EXEMPLARS.values(), *prompts.RETIRED_EXEMPLARS]
    allowed = [ctx.learner_text, *ctx.learner_history, ctx.primary_goal, *ctx.template_texts,
               ctx.context_snapshot]
    return _shared(reply_checks.example_copy(strip_templates(text, ctx), examples, allowed))


def check_coach_as_learner(text: str, ctx: CheckContext) -> CheckResult:
    """The coach speaks as the learner: "Evening time is a crucial part of my life.", or "our night
    shifts" to a learner who said "my night shifts"."""
    return _shared(reply_checks.coach_as_learner(strip_templates(text, ctx), ctx.learner_text, ctx.primary_goal))


def check_asks_for_advice(text: str, ctx: CheckContext) -> CheckResult:
    """The coach asks the learner for tips: "What are some tips for getting started with freestyle?"."""
    return _shared(reply_checks.asks_for_advice(strip_templates(text, ctx)))


def check_announces_content(text: str, ctx: CheckContext) -> CheckResult:
    """The reply announces a guide or a list instead of giving its points ("Here's a complete
    guide to learning Spanish … This will cover everything from …")."""
    return _shared(reply_checks.announces_content(strip_templates(text, ctx)))


def check_unprompted_greeting(text: str, ctx: CheckContext) -> CheckResult:
    """The reply greets a learner who did not greet ("evenings" → "Good evening!")."""
    return _shared(reply_checks.unprompted_greeting(text, ctx.learner_text))


def check_asks_known_goal(text: str, ctx: CheckContext) -> CheckResult:
    """The reply asks for the goal of a learner who completed onboarding ("What's your goal?")."""
    known = ctx.primary_goal if ctx.onboarding_complete else ""
    return _shared(reply_checks.asks_known_goal(strip_templates(text, ctx), known))


def check_dangling_end(text: str, ctx: CheckContext) -> CheckResult:
    """The reply ends on a list opener: "…tips to help you stay motivated:\n1."."""
    return _shared(reply_checks.dangling_end(text))


def check_goal_is_greeting(text: str, ctx: CheckContext) -> CheckResult:
    """The turn stored a greeting or filler as the learner's goal."""
    return _shared(reply_checks.goal_is_greeting(str(dict(ctx.profile_updates).get("primary_goal") or "")))


def check_profile_unsupported(text: str, ctx: CheckContext) -> CheckResult:
    """The turn stored a profile value nothing the learner wrote supports."""
    updates = dict(ctx.profile_updates)
    if not updates:
        return CheckResult(flag=False)
    history = ctx.learner_history or (ctx.learner_text,)
    bad = reply_checks.values_never_given(updates, history)
    return CheckResult(flag=bool(bad), value=float(len(bad)), detail="; ".join(bad))


def check_dodge(text: str, ctx: CheckContext) -> CheckResult:
    """The learner asked something and the reply does not answer it: a generic line on the goal or
    a fallback that could answer any message, or words that share nothing with the question
    ("do you think I should practise today or rest?" → "Let's keep your focus on …")."""
    goal = ctx.primary_goal
    generic = [t.format(goal=goal) for pair in prompts.GOAL_FALLBACKS.values() for t in pair if t and goal]
    generic += [t for t in prompts.FALLBACKS.values() if len(t) > 12]
    generic.append(onboarding_texts.LEAD_INS["question"].strip())  # "Happy to get to that in a moment"
    # Code's own answer to the act (what Bloom does, the plan, the calendar) is written to answer it:
    # only a generic line in it is a dodge. The model's words must also meet the question.
    by_words = bool(strip_templates(text, ctx).strip())
    return _shared(reply_checks.dodge(text, ctx.learner_text, generic, by_words=by_words,
                                      known=f"{goal} {ctx.context_snapshot}"))
