"""Writes to the learner profile: staff/API edits, what the onboarding gate validated, and undo."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from coaching.models import Learner, LearnerProfile, OnboardingStep
from core.errors import ApplicationError

PROFILE_FIELDS = ("primary_goal", "goal_category", "weekly_hours", "best_time", "confidence")


@transaction.atomic
def profile_update(*, learner: Learner, **fields: Any) -> LearnerProfile:
    """Staff/API edits of validated fields (serializers validate ranges). When every field is set,
    the gate is complete; otherwise the onboarding step moves to the first missing field."""
    profile = LearnerProfile.objects.select_for_update().get(learner=learner)
    for name, value in fields.items():
        if name not in PROFILE_FIELDS:
            raise ApplicationError(f"unknown profile field {name!r}", field=name)
        setattr(profile, name, value)
    profile.onboarding_step = _first_missing_step(profile)
    if profile.onboarding_step == OnboardingStep.DONE and profile.onboarding_completed_at is None:
        profile.onboarding_completed_at = timezone.now()
    profile.full_clean()
    profile.save()
    return profile


def _first_missing_step(profile: LearnerProfile) -> str:
    if not profile.primary_goal:
        return OnboardingStep.GOAL
    if not profile.goal_category:
        return OnboardingStep.CATEGORY
    if profile.weekly_hours is None:
        return OnboardingStep.WEEKLY_HOURS
    if not profile.best_time:
        return OnboardingStep.BEST_TIME
    if profile.confidence is None:
        return OnboardingStep.CONFIDENCE
    return OnboardingStep.DONE


@transaction.atomic
def profile_apply_onboarding(*, learner: Learner, updates: dict) -> LearnerProfile:
    """Save what the onboarding gate (coaching.onboarding.advance) validated."""
    profile = LearnerProfile.objects.select_for_update().get(learner=learner)
    for name, value in updates.items():
        setattr(profile, name, value)
    if profile.onboarding_step == OnboardingStep.DONE and profile.onboarding_completed_at is None:
        profile.onboarding_completed_at = timezone.now()
    profile.full_clean()
    profile.save()
    return profile


@transaction.atomic
def profile_restore(*, learner: Learner, values: dict) -> LearnerProfile:
    """Put profile fields back to what they were before the gate's last write (undo)."""
    profile = LearnerProfile.objects.select_for_update().get(learner=learner)
    for name, value in values.items():
        if name not in (*PROFILE_FIELDS, "onboarding_step"):
            raise ApplicationError(f"unknown profile field {name!r}", field=name)
        if name in ("weekly_hours", "confidence"):
            value = None if value in (None, "") else (Decimal(str(value)) if name == "weekly_hours" else int(value))
        else:
            value = value or ""
        setattr(profile, name, value)
    if profile.onboarding_step != OnboardingStep.DONE:
        profile.onboarding_completed_at = None
    profile.full_clean()
    profile.save()
    return profile
