"""Coaching data: API clients and their tokens, learners, profiles (onboarding state), conversations,
messages, the per-turn routing/audit record, and the minimal plan/session/check-in tables that
issue 7 extends.

`Learner` and `Message` are referenced by `memory` by string label: keep their names and primary
keys stable."""

from __future__ import annotations

import hashlib
import secrets
import uuid

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

TOKEN_PREFIX = "bloom_"


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class ApiClient(models.Model):
    """An integration (an app, a research team) that owns learners. Isolation is per client."""

    name = models.CharField(max_length=120)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="api_clients"
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name

    # DRF's IsAuthenticated checks `request.user.is_authenticated`; the client acts as the user.
    @property
    def is_authenticated(self) -> bool:
        return True

    # Permission classes (IsAdminUser, the research export permission) read these on request.user:
    # a client is never staff, and must get a plain False rather than an AttributeError (a 500).
    is_staff = False
    is_superuser = False

    def has_perm(self, perm, obj=None) -> bool:
        return False


class ApiToken(models.Model):
    """A bearer token. Only its sha256 is stored; the raw value is shown once at creation."""

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=120, blank=True)
    # First characters of the raw token, so staff can tell tokens apart without the secret.
    prefix = models.CharField(max_length=16, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.client})"

    @staticmethod
    def generate_raw() -> str:
        return TOKEN_PREFIX + secrets.token_urlsafe(32)


class StudyArm(models.TextChoices):
    COACH = "coach", "Coach"
    TRACKER = "tracker", "Tracker (control)"


class Learner(models.Model):
    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="learners")
    display_name = models.CharField(max_length=120, blank=True)
    # Pseudonymous id used in URLs, exports and the chat page; never the primary key.
    research_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study_arm = models.CharField(max_length=16, choices=StudyArm.choices, default=StudyArm.COACH)
    timezone = models.CharField(max_length=64, default="UTC")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.display_name or str(self.research_id)


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
        max_digits=4, decimal_places=1, null=True, blank=True,
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


class Conversation(models.Model):
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="conversations")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["learner", "-created_at"], name="conv_learner_recent_idx")]

    def __str__(self) -> str:
        return f"conversation {self.pk} ({self.learner})"


class Role(models.TextChoices):
    LEARNER = "learner", "Learner"
    COACH = "coach", "Coach"
    SYSTEM = "system", "System"


class MessageStatus(models.TextChoices):
    """Learner messages: pending while a turn runs, answered once a reply is stored, unanswered
    when the model was down (kept, never lost). Coach/system messages leave it blank."""

    PENDING = "pending", "Pending"
    ANSWERED = "answered", "Answered"
    UNANSWERED = "unanswered", "Unanswered"
    NONE = "", "—"


class Message(models.Model):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=10, choices=Role.choices)
    content = models.TextField()
    specialist = models.CharField(max_length=20, blank=True)
    # NULL (not "") when absent, so the per-conversation unique constraint ignores keyless messages.
    idempotency_key = models.CharField(max_length=128, null=True, blank=True)  # noqa: DJ001
    status = models.CharField(max_length=12, choices=MessageStatus.choices, blank=True, default="")
    reply_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replies"
    )
    trace_id = models.CharField(max_length=32, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "idempotency_key"], condition=Q(idempotency_key__isnull=False),
                name="message_idempotency_per_conversation",
            ),
        ]
        indexes = [models.Index(fields=["conversation", "-created_at"], name="msg_conv_recent_idx")]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class Turn(models.Model):
    """Audit record of one chat turn: routing decision, context injected, tools, guards, timings."""

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
    tool_calls = models.JSONField(default=list, blank=True)
    # Structured options the coach offered in this turn, so a later "option B"/"yes" is resolved
    # by code against them rather than by the model re-reading its own prose.
    offered_options = models.JSONField(default=list, blank=True)
    timings = models.JSONField(default=dict, blank=True)  # phase -> milliseconds
    model_calls = models.PositiveSmallIntegerField(default=0)
    outcome = models.CharField(max_length=20, default="ok")  # ok | fallback | unavailable | templated
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"turn {self.trace_id[:8]} → {self.specialist} ({self.rule})"


class Plan(models.Model):
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="plans")
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


class CompletionSource(models.TextChoices):
    SELF_REPORT = "self_report", "Self report"
    CALENDAR = "calendar", "Calendar"
    STAFF = "staff", "Staff"


class PlannedSession(models.Model):
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="sessions")
    planned_start = models.DateTimeField()  # aware, stored in UTC
    duration_minutes = models.PositiveSmallIntegerField(validators=[MinValueValidator(5), MaxValueValidator(600)])
    topic = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=12, choices=SessionStatus.choices, default=SessionStatus.PLANNED)
    completed_at = models.DateTimeField(null=True, blank=True)
    completion_source = models.CharField(max_length=12, choices=CompletionSource.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["planned_start", "id"]

    def __str__(self) -> str:
        return f"{self.topic or 'session'} @ {self.planned_start:%Y-%m-%d %H:%M} [{self.status}]"


class CheckInOutcome(models.TextChoices):
    COMPLETED = "completed", "Completed"
    SKIPPED = "skipped", "Skipped"


class CheckIn(models.Model):
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="checkins")
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
