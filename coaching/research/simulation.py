"""Seeded study simulation, shared by the simulation test and the export benchmark.

It writes learners, enrolments, plans, sessions, learner messages and check-ins in bulk, and
returns the raw rows it wrote as plain Python values, so a caller can recompute adherence
independently of the SQL. Times deliberately cluster around local midnight on Sundays and
Mondays, and the default period crosses the US, EU and New Zealand DST changes."""

from __future__ import annotations

import datetime as dt
import random
from contextlib import contextmanager
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from django.db import transaction

from coaching.models import (
    ApiClient,
    CheckIn,
    Conversation,
    GoalCategory,
    Learner,
    LearnerProfile,
    Message,
    Plan,
    PlannedSession,
)
from coaching.research import services
from coaching.research.models import Enrollment, Study

TIMEZONES = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "Asia/Kolkata", "Pacific/Auckland", "UTC",
             "America/Los_Angeles"]
CLOCKS = [(23, 30), (0, 15), (7, 0), (12, 30), (18, 0), (21, 45)]
DURATIONS = [15, 30, 45, 60, 90]
COMPLETE_P = {"coach": 0.75, "tracker": 0.6}


@dataclass
class SimLearner:
    learner_id: int
    research_id: str
    name: str
    tz: str
    arm: str = ""
    withdrawn_at: dt.datetime | None = None
    enrolled_at: dt.datetime | None = None
    goal_category: str = ""
    weekly_hours: float = 0.0
    best_time: str = ""
    confidence: int = 0


@dataclass
class SimData:
    learners: list[SimLearner] = field(default_factory=list)
    # (learner_id, planned_start, duration_minutes, status, completed_at)
    sessions: list[tuple[int, dt.datetime, int, str, dt.datetime | None]] = field(default_factory=list)
    messages: list[tuple[int, dt.datetime, str]] = field(default_factory=list)  # learner_id, created_at, text
    # learner_id, created_at, planned_start of the session it reports on
    checkins: list[tuple[int, dt.datetime, dt.datetime]] = field(default_factory=list)


@contextmanager
def _explicit_created_at(*models):
    """Let bulk_create keep the simulated `created_at` instead of stamping "now" (auto_now_add).
    Far cheaper than a bulk_update afterwards; only this seeding helper does it."""
    fields = [m._meta.get_field("created_at") for m in models]
    saved = [fld.auto_now_add for fld in fields]
    for fld in fields:
        fld.auto_now_add = False
    try:
        yield
    finally:
        for fld, value in zip(fields, saved, strict=True):
            fld.auto_now_add = value


def _local(tz: str, day: dt.date, hour: int, minute: int) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=ZoneInfo(tz))


@transaction.atomic
def simulate(*, study: Study, n_learners: int, seed: int, use_enrollment_service: bool = True,
             sessions_per_week: tuple[int, int] = (0, 4), messages_per_week: tuple[int, int] = (0, 3),
             withdraw_share: float = 0.1) -> SimData:
    rng = random.Random(seed)
    data = SimData()
    client = ApiClient.objects.create(name=f"sim-{study.pk}-{seed}")
    categories = list(GoalCategory.values)
    best_times = ["morning", "midday", "afternoon", "evening", "night", "flexible"]
    learners = Learner.objects.bulk_create([
        Learner(client=client, display_name=f"Simfirst{i} Simlast{seed}", timezone=rng.choice(TIMEZONES))
        for i in range(n_learners)
    ])
    profiles = []
    for learner in learners:
        sim = SimLearner(
            learner_id=learner.pk, research_id=str(learner.research_id), name=learner.display_name, tz=learner.timezone,
            goal_category=rng.choice(categories), weekly_hours=rng.choice([1.0, 2.5, 4.0, 6.5, 10.0]),
            best_time=rng.choice(best_times), confidence=rng.randint(1, 10),
        )
        data.learners.append(sim)
        profiles.append(LearnerProfile(
            learner=learner, goal_category=sim.goal_category, weekly_hours=sim.weekly_hours,
            best_time=sim.best_time, confidence=sim.confidence, onboarding_step="done",
            primary_goal=f"Secret goal text {learner.pk} about sourdough",
        ))
    LearnerProfile.objects.bulk_create(profiles)

    monday = study.start_date - dt.timedelta(days=study.start_date.weekday())
    if use_enrollment_service:
        for learner, sim in zip(learners, data.learners, strict=True):
            e = services.enrollment_create(study=study, learner=learner,
                                           enrolled_at=_local(sim.tz, monday, 8, 0))
            sim.arm, sim.enrolled_at = e.arm, e.enrolled_at
    else:  # bulk path for large benchmarks: same allocation rule, no per-learner queries
        per_stratum: dict[str, int] = {}
        rows = []
        for learner, sim in zip(learners, data.learners, strict=True):
            index = per_stratum.get(sim.goal_category, 0)
            per_stratum[sim.goal_category] = index + 1
            sim.arm = services.arm_for_slot(study=study, stratum=sim.goal_category, index=index)
            sim.enrolled_at = _local(sim.tz, monday, 8, 0)
            rows.append(Enrollment(study=study, learner=learner, research_id=learner.research_id, arm=sim.arm,
                                   stratum=sim.goal_category,
                                   stratum_index=index, enrolled_at=sim.enrolled_at, timezone=sim.tz,
                                   baseline_goal_category=sim.goal_category, baseline_weekly_hours=sim.weekly_hours,
                                   baseline_best_time=sim.best_time, baseline_confidence=sim.confidence))
        Enrollment.objects.bulk_create(rows, batch_size=2000)

    withdrawals = []
    for sim in data.learners:
        if rng.random() < withdraw_share:
            day = monday + dt.timedelta(days=7 * rng.randint(2, study.duration_weeks - 2) + 2)
            sim.withdrawn_at = _local(sim.tz, day, 12, 0)
            withdrawals.append(sim)
    for sim in withdrawals:
        Enrollment.objects.filter(study=study, learner_id=sim.learner_id).update(withdrawn_at=sim.withdrawn_at)

    conversations = {c.learner_id: c for c in Conversation.objects.bulk_create(
        [Conversation(learner=learner) for learner in learners])}
    plans: dict[tuple[int, dt.date], Plan] = {}
    pending_sessions: list[tuple[tuple[int, dt.date], PlannedSession]] = []
    pending_messages: list[Message] = []
    checkin_rows: list[tuple[int, int, dt.datetime]] = []  # learner, index into pending_sessions, time
    for sim in data.learners:
        engagement = rng.uniform(0.6, 1.0)
        # Week -1 and the week after the end too: those must not appear in the export.
        for week in range(-1, study.duration_weeks + 1):
            week_monday = monday + dt.timedelta(days=7 * week)
            for _ in range(rng.randint(*sessions_per_week)):
                day = week_monday + dt.timedelta(days=rng.randint(0, 6))
                start = _local(sim.tz, day, *rng.choice(CLOCKS))
                minutes = rng.choice(DURATIONS)
                if rng.random() < COMPLETE_P[sim.arm] * engagement:
                    status = "completed"
                    completed_at = start + dt.timedelta(minutes=minutes + rng.randint(0, 120))
                else:
                    status, completed_at = rng.choice(["skipped", "missed", "planned"]), None
                # The plan is keyed by the local Monday, as coaching does.
                local_monday = start.date() - dt.timedelta(days=start.weekday())
                key = (sim.learner_id, local_monday)
                if key not in plans:
                    plans[key] = Plan(learner_id=sim.learner_id, week_start=local_monday)
                pending_sessions.append((key, PlannedSession(
                    planned_start=start, duration_minutes=minutes, status=status, completed_at=completed_at,
                    completion_source="self_report" if completed_at else "", topic="practice",
                )))
                data.sessions.append((sim.learner_id, start, minutes, status, completed_at))
                if status in ("completed", "skipped") and rng.random() < 0.7:
                    when = (completed_at or start) + dt.timedelta(minutes=rng.randint(1, 300))
                    checkin_rows.append((sim.learner_id, len(pending_sessions) - 1, when))
            for _ in range(rng.randint(*messages_per_week)):
                day = week_monday + dt.timedelta(days=rng.randint(0, 6))
                when = _local(sim.tz, day, *rng.choice(CLOCKS)) + dt.timedelta(minutes=rng.randint(0, 59))
                text = f"Hi it's {sim.name}, mail me at sim{sim.learner_id}@example.org about fractal poetry"
                pending_messages.append(Message(conversation=conversations[sim.learner_id], role="learner",
                                                content=text, created_at=when))
                data.messages.append((sim.learner_id, when, text))
    Plan.objects.bulk_create(list(plans.values()), batch_size=5000)
    for key, s in pending_sessions:
        s.plan = plans[key]
    created_sessions = PlannedSession.objects.bulk_create([s for _, s in pending_sessions], batch_size=5000)
    with _explicit_created_at(Message, CheckIn):
        Message.objects.bulk_create(pending_messages, batch_size=5000)
        CheckIn.objects.bulk_create([
            CheckIn(learner_id=lid, session=created_sessions[i], created_at=when,
                    outcome=created_sessions[i].status)
            for lid, i, when in checkin_rows
        ], batch_size=5000)
    data.checkins = [(lid, when, pending_sessions[i][1].planned_start) for lid, i, when in checkin_rows]
    return data


def expected_protocol_adherence(*, arm: str, intended: int, sessions_per_week: tuple[int, int] = (0, 4)) -> float:
    """E[min(completed, intended) / intended] for one week of a simulated participant of `arm`,
    from the generating process above (sessions per week uniform on `sessions_per_week`, each
    completed with probability COMPLETE_P[arm] × engagement, engagement uniform on [0.6, 1]),
    computed exactly over the session count and the binomial, by quadrature over engagement.
    The export also leaves out the sessions of a participant's withdrawal week after the
    withdrawal and week-1 sessions before the 08:00 enrolment, so the file's mean is a little lower."""
    from math import comb

    counts = range(sessions_per_week[0], sessions_per_week[1] + 1)
    grid = [0.6 + 0.4 * (i + 0.5) / 400 for i in range(400)]
    total = 0.0
    for engagement in grid:
        p = COMPLETE_P[arm] * engagement
        for k in counts:
            total += sum(comb(k, c) * p**c * (1 - p) ** (k - c) * min(c, intended) for c in range(k + 1))
    return total / (len(grid) * len(counts) * intended)
