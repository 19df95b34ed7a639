"""Who the platform serves and what was said: API clients and their tokens, learners, their
conversations and messages. Every app hangs off these rows (memory extracts from messages,
telemetry and research address learners, coaching writes turns), so they sit in the bottom layer
and every app imports them downwards. The tables keep their original `coaching_*` names: the models
moved here without touching data (see migrations/0001_initial.py)."""

from __future__ import annotations

import hashlib
import secrets
import uuid

from django.conf import settings
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

    class Meta:
        db_table = "coaching_apiclient"

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
    # The id a client sees (`/api/v1/tokens/<uuid>`); the integer key stays inside.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=120, blank=True)
    # First characters of the raw token, so staff can tell tokens apart without the secret.
    prefix = models.CharField(max_length=16, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "coaching_apitoken"

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

    class Meta:
        db_table = "coaching_learner"

    def __str__(self) -> str:
        return self.display_name or str(self.research_id)


class Conversation(models.Model):
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="conversations")
    # The id a client sees (`/api/v1/conversations/<uuid>`); the integer key stays inside.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "coaching_conversation"
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
    # The id a client sees (a reply's `id`, `reply_to`, stream frames, a fact's source); the integer
    # key stays inside (turns, facts, the extraction task and the outbox point at it).
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
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
        db_table = "coaching_message"
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
