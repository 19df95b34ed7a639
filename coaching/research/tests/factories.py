"""Test helpers that write rows directly with the ORM, so these tests do not depend on the
coaching engine's service signatures (still being built in parallel)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from coaching.models import ApiClient, Learner, LearnerProfile, Plan, PlannedSession


def client(name: str = "research-tests") -> ApiClient:
    return ApiClient.objects.create(name=name)


def learner(api_client: ApiClient, *, tz: str = "UTC", name: str = "", goal_category: str = "language",
            best_time: str = "evening", weekly_hours: float | None = 3.0, confidence: int | None = 6,
            primary_goal: str = "") -> Learner:
    obj = Learner.objects.create(client=api_client, display_name=name, timezone=tz)
    LearnerProfile.objects.create(
        learner=obj, goal_category=goal_category, best_time=best_time, weekly_hours=weekly_hours,
        confidence=confidence, primary_goal=primary_goal,
    )
    return obj


def local(tz: str, *args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=ZoneInfo(tz))


def monday_of(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def session(learner_obj: Learner, start: dt.datetime, *, minutes: int = 30, status: str = "planned",
            completed_at: dt.datetime | None = None, topic: str = "") -> PlannedSession:
    local_day = start.astimezone(ZoneInfo(learner_obj.timezone)).date()
    plan, _ = Plan.objects.get_or_create(learner=learner_obj, week_start=monday_of(local_day))
    if status == "completed" and completed_at is None:
        completed_at = start + dt.timedelta(minutes=minutes)
    return PlannedSession.objects.create(
        plan=plan, planned_start=start, duration_minutes=minutes, status=status, completed_at=completed_at,
        completion_source="self_report" if status == "completed" else "", topic=topic,
    )


# Every study states its intended use at creation (services.study_create requires it).
INTENDED_USE = {"intended_sessions_per_week": 3, "intended_use": "three study sessions a week (test protocol)"}
