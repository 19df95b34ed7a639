"""The shipped set's onboarding transcripts, replayed through the coaching gate alone (pure code,
no model, no database): each one that opens with a greeting or small talk completes with the goal
the learner actually stated, within its turn budget, and never stores small talk as a value."""

import json
from dataclasses import replace
from decimal import Decimal

import pytest

from coaching.onboarding import OnboardingAnswers, advance
from coaching.turn import reply_checks
from evaluation.services.sets import DEFAULT_SET_FILE

SET = json.loads(DEFAULT_SET_FILE.read_text())
GATED = [t for t in SET["transcripts"] if "final_goal" in t.get("expectations", {})]


def test_the_set_has_greeting_first_correction_and_free_text_category_transcripts():
    tags = {tag for t in GATED for tag in t["tags"]}
    assert {"greeting-first", "free-text-category", "correction", "change-of-mind"} <= tags
    assert {"reschedule", "undo"} <= {tag for t in SET["transcripts"] for tag in t["tags"]}


@pytest.mark.parametrize("transcript", GATED, ids=[t["slug"] for t in GATED])
def test_gate_completes_with_the_stated_goal(transcript):
    profile = transcript["profile"]
    answers = OnboardingAnswers(step=profile.get("onboarding_step", "goal"))
    rejected, stored = 0, []
    for text in transcript["turns"]:
        out = advance(answers, text, rejected_in_row=rejected)
        rejected = 0 if out.accepted else rejected + 1
        if out.accepted:
            values = {k: v for k, v in out.updates.items() if k != "onboarding_step"}
            stored.append(values)
            answers = replace(answers, **values, step=out.updates["onboarding_step"])
    exp = transcript["expectations"]
    assert answers.step == "done", transcript["slug"]
    assert len(transcript["turns"]) <= exp["max_learner_turns"]
    assert answers.primary_goal == exp["final_goal"]
    if "final_hours" in exp:  # the week's total, not an amount per evening or per day
        assert answers.weekly_hours == Decimal(str(exp["final_hours"]))
    assert answers.goal_category == exp["goal_category"]
    for values in stored:
        assert not reply_checks.goal_is_greeting(str(values.get("primary_goal", "")))
        assert reply_checks.values_never_given(
            {k: (str(v) if isinstance(v, Decimal) else v) for k, v in values.items()}, transcript["turns"]) == []
