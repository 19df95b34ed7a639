"""Coaching data: learner profiles (onboarding state), the per-turn routing/audit record, plans,
planned sessions with the audit of their status changes, check-ins and chat links.

The identity record (API clients, tokens, learners, conversations, messages) lives in the bottom
layer, `core.identity`, because every app hangs off it; it is re-exported here because coaching's
own code addresses those rows as coaching data."""

from __future__ import annotations

import uuid

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from core.identity.models import (  # noqa: F401  (re-exported: see the docstring)
    TOKEN_PREFIX,
    ApiClient,
    ApiToken,
    Conversation,
    Learner,
    Message,
    MessageStatus,
    Role,
    StudyArm,
    hash_token,
)


class GoalCategory(models.TextChoices):
    """Fixed list. The category is mapped by keyword rules in code (`coaching.onboarding`), never
    invented by the model; anything unmatched is `other`."""

    LANGUAGE = "language", "Language"
    PROGRAMMING = "programming", "Programming / tech"
    CAREER = "career", "Career / professional"
    ACADEMIC = "academic", "School / exams"
    MUSIC = "music", "Music"
    ART = "art", "Art / creative"
    SPORT = "sport", "Sport / fitness"
    OTHER = "other", "Other"


class BestTime(models.TextChoices):
    MORNING = "morning", "Morning"
    MIDDAY = "midday", "Midday"
    AFTERNOON = "afternoon", "Afternoon"
    EVENING = "evening", "Evening"
    NIGHT = "night", "Night"
    FLEXIBLE = "flexible", "Flexible"


class OnboardingStep(models.TextChoices):
    GOAL = "goal", "Goal"
    CATEGORY = "category", "Goal category"
    WEEKLY_HOURS = "weekly_hours", "Weekly hours"
    BEST_TIME = "best_time", "Best time of day"
    CONFIDENCE = "confidence", "Confidence"
    DONE = "done", "Done"


class LearnerProfile(models.Model):
    learner = models.OneToOneField(Learner, on_delete=models.CASCADE, related_name="profile")
    primary_goal = models.CharField(max_length=300, blank=True)
    goal_category = models.CharField(max_length=20, choices=GoalCategory.choices, blank=True)
    weekly_hours = models.DecimalField(
        max_digits=5, decimal_places=2, null=True, blank=True,
        validators=[MinValueValidator(0.5), MaxValueValidator(80)],
    )
    best_time = models.CharField(max_length=12, choices=BestTime.choices, blank=True)
    confidence = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    onboarding_step = models.CharField(max_length=16, choices=OnboardingStep.choices, default=OnboardingStep.GOAL)
    onboarding_completed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"profile of {self.learner}"

    @property
    def onboarded(self) -> bool:
        return self.onboarding_step == OnboardingStep.DONE


class Turn(models.Model):
    """Audit record of one chat turn: routing decision, context injected, tools, guards, timings."""

    # The id a client sees (`GET /conversations/<id>/turns`); the integer key stays inside.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    learner_message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="turn")
    reply = models.OneToOneField(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="produced_by_turn"
    )
    specialist = models.CharField(max_length=20)
    rule = models.CharField(max_length=40)
    reason = models.CharField(max_length=300)
    trace_id = models.CharField(max_length=32, unique=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    context_snapshot = models.TextField(blank=True)
    guard_events = models.JSONField(default=list, blank=True)
    # What the reader made of the learner's message: act, values with their spans, source.
    reading = models.JSONField(default=dict, blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    # Structured options the coach offered in this turn, so a later "option B"/"yes" is resolved
    # by code against them rather than by the model re-reading its own prose.
    offered_options = models.JSONField(default=list, blank=True)
    # The part of the reply code wrote (confirmations, questions, options, fallbacks), so an audit
    # and the evaluation checks can tell the model's words from the code's.
    code_text = models.TextField(blank=True)
    timings = models.JSONField(default=dict, blank=True)  # phase -> milliseconds
    model_calls = models.PositiveSmallIntegerField(default=0)
    outcome = models.CharField(max_length=20, default="ok")  # ok | fallback | unavailable | templated
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"turn {self.trace_id[:8]} → {self.specialist} ({self.rule})"


class Plan(models.Model):
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="plans")
    # The id a client sees (`GET /learners/<id>/plans`); the integer key stays inside.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    week_start = models.DateField()  # Monday of the week, in the learner's time zone
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["learner", "week_start"], name="plan_one_per_week")]

    def __str__(self) -> str:
        return f"plan {self.week_start} ({self.learner})"


class SessionStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    COMPLETED = "completed", "Completed"
    SKIPPED = "skipped", "Skipped"
    MISSED = "missed", "Missed"
    # Taken out of the plan with a reason before it was due (never deleted: the record stays).
    CANCELLED = "cancelled", "Cancelled"
    # A missed (or overdue) session a make-up session took the place of (`replaced_by`).
    REPLACED = "replaced", "Replaced by a make-up"


class CompletionSource(models.TextChoices):
    SELF_REPORT = "self_report", "Self report"
    CALENDAR = "calendar", "Calendar"
    STAFF = "staff", "Staff"


class PlannedSession(models.Model):
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="sessions")
    # The id a client sees (`/api/v1/sessions/<uuid>`); the integer key stays inside.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    planned_start = models.DateTimeField()  # aware, stored in UTC
    duration_minutes = models.PositiveSmallIntegerField(validators=[MinValueValidator(5), MaxValueValidator(600)])
    topic = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=12, choices=SessionStatus.choices, default=SessionStatus.PLANNED)
    completed_at = models.DateTimeField(null=True, blank=True)
    completion_source = models.CharField(max_length=12, choices=CompletionSource.choices, blank=True)
    # The make-up session that took this one's place (status `replaced`).
    replaced_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["planned_start", "id"]

    def __str__(self) -> str:
        return f"{self.topic or 'session'} @ {self.planned_start:%Y-%m-%d %H:%M} [{self.status}]"


class SessionStatusChange(models.Model):
    """Audit of every change of a planned session: its status (check-in, missed task, calendar
    import, staff, cancel, make-up) and its time (a move: `from_start` → `to_start`, status
    unchanged). The research export reads a closed week's sessions as this trail says they were
    when the week closed. The table keeps its original `research_` name: the model moved here
    from the research app without touching data."""

    session = models.ForeignKey(PlannedSession, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(max_length=12)
    to_status = models.CharField(max_length=12)
    source = models.CharField(max_length=20)  # checkin | api | calendar | missed_task | staff | move | cancel | makeup
    detail = models.CharField(max_length=200, blank=True)
    # A completion's evidence (CompletionSource) when to_status is completed.
    completion_source = models.CharField(max_length=12, blank=True)
    from_start = models.DateTimeField(null=True, blank=True)
    to_start = models.DateTimeField(null=True, blank=True)
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "research_sessionstatuschange"

    def __str__(self) -> str:
        return f"{self.session_id}: {self.from_status} → {self.to_status} ({self.source})"



class CheckInOutcome(models.TextChoices):
    COMPLETED = "completed", "Completed"
    SKIPPED = "skipped", "Skipped"


class CheckIn(models.Model):
    """A learner's report on a session (or on no session). Never deleted once its session's week
    has closed; a repeat of the same report on the same session is the same row."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="checkins")
    # The id a client sees (check-in lists and the check-in a POST creates); the integer key stays inside.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    session = models.ForeignKey(PlannedSession, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="checkins")
    message = models.ForeignKey(Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="checkins")
    outcome = models.CharField(max_length=12, choices=CheckInOutcome.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"check-in {self.outcome} ({self.learner})"


CHAT_LINK_SALT = "bloom.coaching.chat-link"  # signing salt: a chat-link token is valid for nothing else


class ChatLink(models.Model):
    """A signed, expiring link an API client gives one of its learners: the page behind it shows
    that learner's conversation and needs no login. The URL carries a signature over this row's id
    and expiry (django.core.signing, SECRET_KEY); the row makes revocation possible."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="chat_links")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"chat link of {self.learner} until {self.expires_at:%Y-%m-%d %H:%M}"
