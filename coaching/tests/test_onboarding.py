"""The onboarding gate is deterministic: tested exhaustively without a model or a database."""

from decimal import Decimal

import pytest

from coaching.models import OnboardingStep
from coaching.onboarding import (
    OnboardingAnswers,
    advance,
    is_vague,
    map_category,
    parse_best_time,
    parse_confidence,
    parse_hours,
)


@pytest.mark.parametrize("text,expected", [
    ("3", "3.0"), ("3 hours", "3.0"), ("2.5h", "2.5"), ("2,5", "2.5"), ("three", "3.0"),
    ("about 4 hrs a week", "4.0"), ("two and a half", "2.5"), ("90 minutes", "1.5"), ("80", "80.0"),
    ("0.5", "0.5"), ("3-4 hours", "3.0"),
])
def test_parse_hours_accepts(text, expected):
    assert parse_hours(text) == Decimal(expected)


@pytest.mark.parametrize("text", ["0", "0.2", "81", "200 hours", "a lot", "", "idk", "zero"])
def test_parse_hours_rejects(text):
    assert parse_hours(text) is None


@pytest.mark.parametrize("text,expected", [("7", 7), ("7/10", 7), ("about an 8 out of 10", 8), ("ten", 10), ("1", 1)])
def test_parse_confidence(text, expected):
    assert parse_confidence(text) == expected


@pytest.mark.parametrize("text", ["0", "11", "very", "", "100"])
def test_parse_confidence_rejects(text):
    assert parse_confidence(text) is None


@pytest.mark.parametrize("text,expected", [
    ("evenings", "evening"), ("in the morning before work", "morning"), ("lunch break", "midday"),
    ("7pm", "evening"), ("6:30 am", "morning"), ("late at night", "night"), ("I am free in the evening", "evening"),
    ("whenever", "flexible"),
])
def test_parse_best_time(text, expected):
    assert parse_best_time(text) == expected


@pytest.mark.parametrize("goal,expected", [
    ("learn to swim", "sport"), ("I want to go swimming twice a week", "sport"), ("speak Spanish", "language"),
    ("learn Python", "programming"), ("pass my calculus exam", "academic"), ("play guitar", "music"),
    ("get a promotion at my job", "career"), ("become more patient", None), ("be careful with money", None),
])
def test_category_keyword_rules(goal, expected):
    assert map_category(goal) == expected


@pytest.mark.parametrize("text", ["", "  ", "idk", "skip", "Skip.", "maybe", "?", "ok", "I don't know", "k", "..."])
def test_vague(text):
    assert is_vague(text)


def _apply(answers, out):
    data = {**answers.__dict__, **out.updates}
    data["step"] = data.pop("onboarding_step")
    return OnboardingAnswers(**data)


def test_full_gate_with_category_inferred_takes_four_answers():
    a = OnboardingAnswers()
    for text in ["I want to learn to swim", "3 hours", "evenings", "6"]:
        out = advance(a, text)
        assert out.accepted, (a.step, out.error)
        a = _apply(a, out)
    assert a.step == OnboardingStep.DONE
    assert (a.goal_category, a.weekly_hours, a.best_time, a.confidence) == ("sport", Decimal("3.0"), "evening", 6)


def test_unmapped_goal_asks_category_and_other_is_valid():
    a = OnboardingAnswers()
    a = _apply(a, advance(a, "become more patient"))
    assert a.step == OnboardingStep.CATEGORY and a.goal_category == ""
    assert not advance(a, "hmm").accepted
    assert not advance(a, "purple").accepted
    a = _apply(a, advance(a, "other"))
    assert a.goal_category == "other" and a.step == OnboardingStep.WEEKLY_HOURS


@pytest.mark.parametrize("step", [OnboardingStep.GOAL, OnboardingStep.CATEGORY, OnboardingStep.WEEKLY_HOURS,
                                  OnboardingStep.BEST_TIME, OnboardingStep.CONFIDENCE])
@pytest.mark.parametrize("text", ["skip", "idk", "", "maybe", "next", "you decide"])
def test_vague_answers_never_advance_any_step(step, text):
    out = advance(OnboardingAnswers(step=step, primary_goal="x", goal_category="sport"), text)
    assert not out.accepted and out.next_step == step and out.updates == {}


def test_out_of_range_answers_do_not_advance():
    assert not advance(OnboardingAnswers(step=OnboardingStep.WEEKLY_HOURS), "100 hours").accepted
    assert not advance(OnboardingAnswers(step=OnboardingStep.CONFIDENCE), "12").accepted
    assert not advance(OnboardingAnswers(step=OnboardingStep.BEST_TIME), "purple").accepted


def test_done_stays_done():
    assert not advance(OnboardingAnswers(step=OnboardingStep.DONE), "hello").accepted
