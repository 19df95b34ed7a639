"""What the gate works on and what it decides: the answers so far and the outcome of one answer.
Data only, so the gate, the readers of answers and the texts can all name them without importing
one another."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from coaching.models import OnboardingStep


@dataclass
class OnboardingAnswers:
    """The profile fields the gate collects (mirrors LearnerProfile; kept DB-free for tests)."""

    step: str = OnboardingStep.GOAL
    primary_goal: str = ""
    goal_category: str = ""
    weekly_hours: Decimal | None = None
    best_time: str = ""
    confidence: int | None = None


@dataclass
class StepOutcome:
    accepted: bool
    step: str  # the step that was answered (or attempted)
    next_step: str
    updates: dict = field(default_factory=dict)  # profile fields to save
    error: str = ""  # why it did not advance (kind of non-answer or parse failure; area_only: the area)
    kind: str = ""  # greeting | filler | question | refusal | off_topic | vague_goal | area_only | unmatched
    notes: list[str] = field(default_factory=list)  # code-rendered sentences said to the learner
    corrected: list[str] = field(default_factory=list)  # earlier fields this answer changed
