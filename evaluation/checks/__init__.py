"""Deterministic checks run on every replayed reply. Pure functions: text + context in, a result
out; no database, no model. Code decides what it can; the judge only scores what it must.

Each check returns a `CheckResult(flag, value, detail)`; a run's *rate* for a check is the share of
replies with `flag=True`. Thresholds live in `CheckConfig` so a comparison records what it used.
The checks live by family in `text`, `behaviour` and `voice`; this module names them and runs them all."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluation.checks.base import CheckConfig, CheckContext, CheckResult
from evaluation.checks.behaviour import check_goal_drift, check_premature_advice, check_unperformed_action
from evaluation.checks.text import (
    check_emoji,
    check_format_density,
    check_length,
    check_repetition,
    check_scaffold_leak,
    check_sentence_repeat,
)
from evaluation.checks.voice import (
    check_announces_content,
    check_asks_for_advice,
    check_asks_known_goal,
    check_coach_as_learner,
    check_dangling_end,
    check_dodge,
    check_example_copy,
    check_goal_is_greeting,
    check_loop,
    check_parrot,
    check_profile_unsupported,
    check_refusal,
    check_third_person,
    check_unprompted_greeting,
)

CHECK_NAMES = ("scaffold_leak", "over_length", "repetition", "sentence_repeat", "format_density", "emoji",
               "premature_advice", "unperformed_action", "goal_drift", "third_person", "parrot", "refusal", "loop",
               "goal_is_greeting", "profile_unsupported", "example_copy", "coach_as_learner", "dangling_end",
               "unprompted_greeting", "asks_known_goal", "asks_for_advice",
               "announces_content", "dodge")
# Human labels for reports; the names above are the stored keys.
CHECK_LABELS = {
    "scaffold_leak": "Scaffold leak",
    "over_length": "Over length cap (verbosity)",
    "repetition": "Repetition / looping (verbosity)",
    "sentence_repeat": "Repeats one of its own sentences",
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
    "unprompted_greeting": "Greets a learner who did not greet",
    "asks_known_goal": "Asks for a goal it already knows",
    "asks_for_advice": "Asks the learner for tips (role reversal)",
    "announces_content": "Announces a guide or list instead of giving it",
    "dodge": "Does not answer the question asked",
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
            "sentence_repeat": check_sentence_repeat(text),
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
            "unprompted_greeting": check_unprompted_greeting(text, ctx),
            "asks_known_goal": check_asks_known_goal(text, ctx),
            "asks_for_advice": check_asks_for_advice(text, ctx),
            "announces_content": check_announces_content(text, ctx),
            "dodge": check_dodge(text, ctx),
        }
        return {name: result.as_dict() for name, result in results.items()}


def run_checks(text: str, ctx: CheckContext, config: CheckConfig | None = None) -> dict[str, dict[str, Any]]:
    return CheckSuite(config or CheckConfig()).run(text, ctx)


__all__ = ["CHECK_LABELS", "CHECK_NAMES", "CheckConfig", "CheckContext", "CheckResult", "CheckSuite", "run_checks"]
