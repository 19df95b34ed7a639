"""What every deterministic check shares: its result, the thresholds it reads (`CheckConfig`) and
the context of the turn it looks at (`CheckContext`), plus the word helpers."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any


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



def strip_templates(text: str, ctx: CheckContext) -> str:
    for template in ctx.template_texts:
        if template:
            text = text.replace(template, " ")
    return text
