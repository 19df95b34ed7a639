"""Checks on what a reply does: advice before onboarding is done, claims of actions no tool
performed, and drift away from the learner's own goal."""

from __future__ import annotations

import re

from coaching.turn import reply_checks
from evaluation.checks.base import CheckContext, CheckResult, strip_templates

# --- advice before onboarding completes -----------------------------------------------------
_ADVICE = re.compile(
    r"(?i)\b(?:you should|you need to|you must|i (?:would )?(?:recommend|suggest)|my (?:advice|recommendation)|"
    r"make sure (?:to|you)|start by|try (?:to |doing |practising |practicing )|"
    r"here are (?:some|a few|\d+) (?:tips|steps|ways|strategies|ideas)|the best way to|"
    r"step \d|first,? (?:you|start)|set aside|aim for \d|schedule (?:a|your) )"
)


def advice_phrases(text: str) -> list[str]:
    return [m.group(0) for m in _ADVICE.finditer(text)]


def check_premature_advice(text: str, ctx: CheckContext) -> CheckResult:
    """Advice (imperatives, tips, steps) while onboarding is still collecting who the learner is:
    the righting reflex in its most checkable form."""
    if ctx.onboarding_complete:
        return CheckResult(flag=False, detail="onboarding complete")
    hits = advice_phrases(strip_templates(text, ctx))
    return CheckResult(flag=bool(hits), value=float(len(hits)), detail=", ".join(hits[:5]))


# --- claims of actions not performed --------------------------------------------------------
# (claim pattern, tool-name fragments that would make it true)
_ACTION_CLAIMS: list[tuple[str, re.Pattern[str], tuple[str, ...]]] = [
    ("calendar", re.compile(
        r"(?i)\b(?:i(?:'ve| have)?|i just|i went ahead and|it(?:'s| is| has been)|(?:that's|that is)|done[,!] i)\s*"
        r"(?:just |now |already )?(?:added|put|placed|synced|scheduled|booked|blocked)\b[^.?!]{0,60}"
        r"\b(?:calendar|schedule|diary)\b"
        r"|\b(?:added|synced|scheduled) (?:it |that |this )?(?:to|in|on) your (?:calendar|schedule|diary)\b"),
     ("calendar", "schedule", "session", "plan")),
    ("reminder", re.compile(r"(?i)\bi(?:'ve| have)? (?:set|created|scheduled|added) (?:a |you a |the )?reminders?\b"
                            r"|\breminders? (?:is|are|has been|have been) set\b"),
     ("remind", "schedule", "notify")),
    ("plan saved", re.compile(r"(?i)\bi(?:'ve| have)? (?:saved|created|updated|logged|recorded|booked|scheduled)"
                              r" (?:your|the|a|this) (?:plan|session|sessions|check-?in|progress|goal)\b"),
     ("plan", "session", "schedule", "check", "log", "goal", "profile")),
    ("message sent", re.compile(r"(?i)\bi(?:'ve| have)? (?:sent|emailed|texted|messaged) (?:you|it|that)\b"),
     ("send", "email", "notify")),
]


def check_unperformed_action(text: str, ctx: CheckContext) -> CheckResult:
    """A claim that something was done ("I've added it to your calendar") with no tool call in the
    turn that could have done it: a coach claiming calendar entries it never made. Also the
    coaching guard's shared check (`reply_checks.action_claims`): claims and promises of a write —
    scheduling, moving, logging, cancelling, a reminder — that no action tool of the turn backs
    ("Let's try again tomorrow with a new set of sessions scheduled for the next week."), read on
    the model's words only (code's own "Logged: …" / "… and I'll schedule it." are left out)."""
    tools = [t.lower() for t in ctx.tool_calls]
    unbacked = []
    for name, pattern, fragments in _ACTION_CLAIMS:
        if pattern.search(text) and not any(f in t for t in tools for f in fragments):
            unbacked.append(name)
    for tool, said in reply_checks.action_claims(strip_templates(text, ctx), tools):
        unbacked.append(f"{said!r} without {tool}")
    return CheckResult(flag=bool(unbacked), value=float(len(unbacked)), detail=", ".join(unbacked))


# --- goal-category drift (script fixation) --------------------------------------------------
CAREER_TERMS = ("career", "careers", "job", "jobs", "resume", "résumé", "cv", "interview", "interviews",
                "promotion", "workplace", "employer", "employers", "linkedin", "professional development",
                "your boss", "colleagues", "hiring", "salary", "portfolio for employers", "job market")
CAREER_CATEGORIES = frozenset({"career"})


def _mentions(text: str, term: str) -> bool:
    return re.search(rf"(?i)(?<![A-Za-z]){re.escape(term)}(?![A-Za-z])", text) is not None


def check_goal_drift(text: str, ctx: CheckContext) -> CheckResult:
    """Career/job framing when the learner's goal is not a career goal (script fixation), plus any
    term the transcript says must not come up. Words the learner used themselves don't count."""
    own = f"{ctx.learner_text} {ctx.primary_goal}"
    terms: list[str] = list(ctx.must_not_mention)
    if ctx.goal_category and ctx.goal_category not in CAREER_CATEGORIES:
        terms += [t for t in CAREER_TERMS if t not in terms]
    model_text = strip_templates(text, ctx)
    hits = sorted({t for t in terms if _mentions(model_text, t) and not _mentions(own, t)})
    return CheckResult(flag=bool(hits), value=float(len(hits)), detail=", ".join(hits))
