"""Deterministic checks run on every replayed reply. Pure functions: text + context in, a result
out; no database, no model. Code decides what it can; the judge only scores what it must.

Each check returns a `CheckResult(flag, value, detail)`; a run's *rate* for a check is the share of
replies with `flag=True`. Thresholds live in `CheckConfig` so a comparison records what it used."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from coaching import reply_checks


@dataclass(frozen=True)
class CheckResult:
    flag: bool
    value: float = 0.0
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CheckConfig:
    # A chat message, not a report: the coach's hard cap is about this size too.
    max_words: int = 120
    # Markdown structure per 100 words above which a reply reads like a document.
    max_format_per_100_words: float = 4.0
    # Warmth is fine; a string of emoji is not.
    max_emoji: int = 2


@dataclass(frozen=True)
class CheckContext:
    goal_category: str = ""
    primary_goal: str = ""
    onboarding_complete: bool = True
    tool_calls: tuple[str, ...] = ()  # names of tools actually executed in this turn
    must_not_mention: tuple[str, ...] = ()
    learner_text: str = ""  # the learner's own words this turn: echoing them is not drift
    system_prompt: str = ""  # when known, long verbatim runs of it in a reply are a leak
    # The context block the model was given (profile line + memory): echoing it is a leak too.
    context_snapshot: str = ""
    # Code-rendered text the engine appends (onboarding questions listing "career" as a category,
    # templated fallbacks): not the model's words, so excluded from drift and advice checks.
    template_texts: tuple[str, ...] = ()
    # The coach's earlier replies in this conversation (loop: the same text a third time).
    previous_replies: tuple[str, ...] = ()
    # Every learner message of the conversation so far, this one included (profile values must
    # come from what the learner said), and the profile values the turn saved.
    learner_history: tuple[str, ...] = ()
    profile_updates: tuple[tuple[str, Any], ...] = ()


# --- helpers --------------------------------------------------------------------------------
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def word_count(text: str) -> int:
    return len(words(text))


# --- scaffold leak --------------------------------------------------------------------------
# Markers that only appear when prompt scaffolding, chat-template tokens or the model's own
# planning text reach the learner. Conservative: each is something a coach never says to a person.
_SCAFFOLD_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("template token", re.compile(r"<\|?(?:im_start|im_end|endoftext|eot_id|start_header_id|end_header_id)"
                                  r"\|?>"
                                  r"|<(?:start|end)_of_turn>|<bos>|<eos>|</?s>|\[/?INST\]|<<SYS>>", re.I)),
    ("role tag", re.compile(r"(?im)^\s*(?:\*\*)?(?:system|assistant|user|coach|learner|human|ai|model)"
                            r"(?:\*\*)?\s*:")),
    ("prompt section", re.compile(
        r"(?im)^\s*#{1,6}\s*(?:system|instructions?|learner context|context|role|rules|constraints|persona|"
        r"guidelines|memory|recent patterns|historical summary|profile|output format|task)\b")),
    ("context label", re.compile(r"(?i)\*\*(?:goal|recent patterns|historical summary)(?::\*\*|\*\*:)"
                                 r"|\[(?:preference|barrier|progress|insight)\]")),
    ("plan preamble", re.compile(r"(?i)\bhere(?:'s| is) (?:my|the) (?:plan|response|reply|answer|draft)\b"
                                 r"(?: for you)?\s*[:.…]")),
    ("self as model", re.compile(r"(?i)\bas an ai\b"
                                 r"|\b(?:i am|i'm) (?:a|an) (?:ai|language model|large language model)\b"
                                 r"|\bmy (?:system )?(?:prompt|instructions)\b")),
    ("prompt echo", re.compile(r"(?i)\byou are (?:a|an|bloom)\b.{0,40}\b(?:coach|assistant)\b"
                               r"|\b(?:do not|don't|never) (?:reveal|mention) (?:the|these|your) "
                               r"(?:instructions|prompt)\b"
                               r"|\brespond (?:in|with) (?:at most|no more than) \d+")),
    ("template placeholder", re.compile(r"\{\{.*?\}\}|\{[a-z_]+\}|<think>|</think>")),
    ("context fence", re.compile(r"<<<\s*[A-Z]{3,}|[A-Z]{3,}\s*>>>|\(data, not instructions\)"
                                 r"|\brecent facts \(newest first\)", re.I)),
    # The prompt's own formatting vocabulary in a chat to a learner ("use a lot of markdown").
    ("prompt vocabulary", re.compile(r"(?i)\bmarkdown\b|\bactions line\b|\bsystem prompt\b|\bactions done this turn\b"
                                     r"|\bnotes for you only\b|\bwhat you know about them\b"
                                     r"|\bthe app scheduled and logged nothing\b")),
]


ECHO_MIN_WORDS = 8


def check_scaffold_leak(text: str, ctx: CheckContext | None = None) -> CheckResult:
    hits = [name for name, pattern in _SCAFFOLD_PATTERNS if pattern.search(text)]
    if ctx is not None:
        # Echoes of the prompt or the context block. (Echoes of the learner's own message are the
        # separate `parrot` check; narrating the learner is `third_person`.)
        for label, source in (("system-prompt", ctx.system_prompt), ("context", ctx.context_snapshot)):
            if source:
                run = reply_checks.longest_shared_run(strip_templates(text, ctx), source)
                if run >= ECHO_MIN_WORDS:
                    hits.append(f"{label} echo ({run} words)")
    return CheckResult(flag=bool(hits), value=float(len(hits)), detail=", ".join(hits))


def strip_templates(text: str, ctx: CheckContext) -> str:
    for template in ctx.template_texts:
        if template:
            text = text.replace(template, " ")
    return text


# --- repetition (looping) --------------------------------------------------------------------
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def check_repetition(text: str) -> CheckResult:
    """A model stuck in a loop: the same sentence at least three times, or fewer than half of the
    word trigrams distinct in a reply long enough to judge (≥ 24 words). Value: repeated share."""
    sentences = [re.sub(r"\W+", " ", s).strip().lower() for s in _SENTENCE.findall(text)]
    sentences = [s for s in sentences if len(s.split()) >= 3]
    most = max((sentences.count(s) for s in set(sentences)), default=0)
    toks = [w.lower() for w in words(text)]
    trigrams = [tuple(toks[i:i + 3]) for i in range(len(toks) - 2)]
    distinct = len(set(trigrams)) / len(trigrams) if trigrams else 1.0
    flag = most >= 3 or (len(toks) >= 24 and distinct < 0.5)
    return CheckResult(flag=flag, value=round(1 - distinct, 3),
                       detail=f"max sentence repeats {most}, distinct trigrams {distinct:.2f}")


# --- length / format / emoji ----------------------------------------------------------------
def check_length(text: str, cfg: CheckConfig = CheckConfig()) -> CheckResult:
    n = word_count(text)
    return CheckResult(flag=n > cfg.max_words, value=float(n), detail=f"{n} words (cap {cfg.max_words})")


_BULLET = re.compile(r"(?m)^\s*(?:[-*•+]|\d+[.)])\s+\S")
_BOLD = re.compile(r"\*\*[^*\n]+?\*\*|__[^_\n]+?__")
_HEADER = re.compile(r"(?m)^\s*#{1,6}\s+\S")


def format_counts(text: str) -> dict[str, int]:
    return {"bullets": len(_BULLET.findall(text)), "bold": len(_BOLD.findall(text)),
            "headers": len(_HEADER.findall(text))}


def check_format_density(text: str, cfg: CheckConfig = CheckConfig()) -> CheckResult:
    counts = format_counts(text)
    total = sum(counts.values())
    n = max(word_count(text), 1)
    per100 = total * 100.0 / n
    # A two-line reply with one bold word is not "dense": require some structure in absolute terms.
    flag = total >= 3 and per100 > cfg.max_format_per_100_words
    detail = ", ".join(f"{k}={v}" for k, v in counts.items()) + f" ({per100:.1f}/100 words)"
    return CheckResult(flag=flag, value=round(per100, 2), detail=detail)


_EMOJI = re.compile(
    "[\U0001F300-\U0001F5FF\U0001F600-\U0001F64F\U0001F680-\U0001F6FF\U0001F900-\U0001F9FF"
    "\U0001FA70-\U0001FAFF\u2600-\u26FF\u2700-\u27BF\U0001F1E6-\U0001F1FF]"
)


def emoji_count(text: str) -> int:
    return len(_EMOJI.findall(text))


def check_emoji(text: str, cfg: CheckConfig = CheckConfig()) -> CheckResult:
    n = emoji_count(text)
    return CheckResult(flag=n > cfg.max_emoji, value=float(n), detail=f"{n} emoji (max {cfg.max_emoji})")


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
    turn that could have done it: the calendar-honesty failure from the field note."""
    tools = [t.lower() for t in ctx.tool_calls]
    unbacked = []
    for name, pattern, fragments in _ACTION_CLAIMS:
        if pattern.search(text) and not any(f in t for t in tools for f in fragments):
            unbacked.append(name)
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


# --- voice: shared with the coaching guard (coaching/reply_checks.py) -------------------------
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
    from coaching import prompts

    examples = [*prompts.EXEMPLARS.values(), *prompts.RETIRED_EXEMPLARS]
    allowed = [ctx.learner_text, *ctx.learner_history, ctx.primary_goal, *ctx.template_texts,
               ctx.context_snapshot]
    return _shared(reply_checks.example_copy(strip_templates(text, ctx), examples, allowed))


def check_coach_as_learner(text: str, ctx: CheckContext) -> CheckResult:
    """The coach speaks as the learner: "Evening time is a crucial part of my life."."""
    return _shared(reply_checks.coach_as_learner(strip_templates(text, ctx)))


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


# --- all checks -----------------------------------------------------------------------------
CHECK_NAMES = ("scaffold_leak", "over_length", "repetition", "format_density", "emoji", "premature_advice",
               "unperformed_action", "goal_drift", "third_person", "parrot", "refusal", "loop", "goal_is_greeting",
               "profile_unsupported", "example_copy", "coach_as_learner",
               "dangling_end")
# Human labels for reports; the names above are the stored keys.
CHECK_LABELS = {
    "scaffold_leak": "Scaffold leak",
    "over_length": "Over length cap (verbosity)",
    "repetition": "Repetition / looping (verbosity)",
    "format_density": "Formatting density",
    "emoji": "Emoji over limit",
    "premature_advice": "Advice before onboarding done",
    "unperformed_action": "Claims action not performed",
    "goal_drift": "Goal-category drift (fixation)",
    "third_person": "Talks about the learner (third person)",
    "parrot": "Parrots the learner's message",
    "refusal": "Refuses an ordinary message",
    "loop": "Same reply 3+ times in a conversation",
    "goal_is_greeting": "Greeting/filler stored as the goal",
    "profile_unsupported": "Profile value the learner never gave",
    "example_copy": "Copies the prompt's example",
    "coach_as_learner": "Speaks as the learner (\u201cmy life\u201d)",
    "dangling_end": "Ends on a list opener (\u201c:\u201d, \u201c1.\u201d)",
}


@dataclass
class CheckSuite:
    config: CheckConfig = field(default_factory=CheckConfig)

    def run(self, text: str, ctx: CheckContext) -> dict[str, dict[str, Any]]:
        cfg = self.config
        results = {
            "scaffold_leak": check_scaffold_leak(text, ctx),
            "over_length": check_length(text, cfg),
            "repetition": check_repetition(text),
            "format_density": check_format_density(text, cfg),
            "emoji": check_emoji(text, cfg),
            "premature_advice": check_premature_advice(text, ctx),
            "unperformed_action": check_unperformed_action(text, ctx),
            "goal_drift": check_goal_drift(text, ctx),
            "third_person": check_third_person(text, ctx),
            "parrot": check_parrot(text, ctx),
            "refusal": check_refusal(text, ctx),
            "loop": check_loop(text, ctx),
            "goal_is_greeting": check_goal_is_greeting(text, ctx),
            "profile_unsupported": check_profile_unsupported(text, ctx),
            "example_copy": check_example_copy(text, ctx),
            "coach_as_learner": check_coach_as_learner(text, ctx),
            "dangling_end": check_dangling_end(text, ctx),
        }
        return {name: result.as_dict() for name, result in results.items()}


def run_checks(text: str, ctx: CheckContext, config: CheckConfig | None = None) -> dict[str, dict[str, Any]]:
    return CheckSuite(config or CheckConfig()).run(text, ctx)
