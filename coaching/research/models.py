"""Research data: studies and their arms, enrolments (randomised, stratified), calendar feeds,
reminder deliveries, session status audit and export logs.

Plans, sessions and check-ins themselves live in `coaching.models` (Plan, PlannedSession,
CheckIn); this app only reads them and changes session status through its services."""

from __future__ import annotations

import secrets
import uuid

from django.conf import settings
from django.db import models

from core.identity.models import Learner, Message


def _arms_default() -> list[str]:
    return ["coach", "tracker"]


def generate_study_secret() -> str:
    return secrets.token_hex(32)


class Study(models.Model):
    # The id of `/api/v1/research/studies/<id>/export` and of the export file name; the integer
    # key stays inside (it is also in the participant-id HMAC, so it never changes).
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=120, unique=True)
    arms = models.JSONField(default=_arms_default, help_text="Arm codes, each one of Learner.study_arm's choices.")
    start_date = models.DateField(help_text="Study week 1 is the ISO week (Monday start) containing this date.")
    duration_weeks = models.PositiveSmallIntegerField(default=12)
    cohort = models.CharField(max_length=60, blank=True, help_text="Cohort label copied into every export row.")
    # Key for pseudonymous ids, randomisation and date shifts. Generated, never listed or edited in
    # the admin: rotating it changes every participant id in later exports.
    secret = models.CharField(max_length=128, default=generate_study_secret, editable=False)
    # The pre-registered intended use (Sieverink 2017): adherence is measured against it for every
    # participant-week, so a learner who plans less cannot raise their arm's outcome. Stated at
    # creation and exported; never edited afterwards.
    intended_sessions_per_week = models.PositiveSmallIntegerField(
        default=3, help_text="Sessions per week the protocol asks of every participant (the primary outcome's target).")
    intended_use = models.TextField(
        blank=True, help_text="The protocol's intended use and why, in words; printed in the codebook.")
    date_shift_enabled = models.BooleanField(
        default=False,
        help_text="Shift every date of the export by one secret whole-week offset for the whole study "
                  "(intervals, weekdays and study weeks are kept; the real calendar dates are not in the file).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"
        permissions = [("export_research_data", "Can export pseudonymised research data")]

    def __str__(self) -> str:
        return self.name


class Enrollment(models.Model):
    """One randomised participant. Written only by `services.enrolment` (enrol, withdraw, the arm
    applied at the study's start), each change with an `EnrollmentEvent`. Kept when the learner is
    erased (intention to treat): the learner link goes NULL and the row stays as a pseudonymous
    stub, its participant id derived from `research_id`, a copy of the learner's random UUID."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="enrollments")
    learner = models.ForeignKey(Learner, null=True, blank=True, on_delete=models.SET_NULL, related_name="enrollments")
    research_id = models.UUIDField(null=True, editable=False)
    arm = models.CharField(max_length=16)
    # Goal category at enrolment (stratification variable); "unknown" when the profile had none.
    stratum = models.CharField(max_length=20)
    # 0-based position within the stratum: with the study secret it determines the arm.
    stratum_index = models.PositiveIntegerField()
    enrolled_at = models.DateTimeField()
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    # Baseline: a copy of the profile taken at enrolment and never updated afterwards, so a later
    # profile edit cannot change a past export row (the profile itself keeps changing).
    baseline_goal_category = models.CharField(max_length=20, blank=True)
    baseline_weekly_hours = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True)
    baseline_best_time = models.CharField(max_length=12, blank=True)
    baseline_confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    # The learner's time zone at enrolment. Study weeks are counted in it, so moving later does
    # not re-bucket weeks that were already exported.
    timezone = models.CharField(max_length=64, default="UTC")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "learner"], name="enrollment_one_per_study"),
            models.UniqueConstraint(fields=["study", "stratum", "stratum_index"], name="enrollment_stratum_slot"),
        ]
        indexes = [models.Index(fields=["study", "arm"], name="enrollment_study_arm_idx")]

    def __str__(self) -> str:
        return f"{self.learner_id} in {self.study_id} ({self.arm})"


class EnrollmentEvent(models.Model):
    """Audit of every enrolment state change (Zulip's RealmAuditLog pattern): one row per write,
    in the same transaction, by the one service that makes it."""

    ENROLLED = "enrolled"
    ARM_APPLIED = "arm_applied"  # the learner's delivered treatment set to this enrolment's arm
    WITHDRAWN = "withdrawn"
    LEARNER_ERASED = "learner_erased"

    enrollment = models.ForeignKey(Enrollment, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=20)
    detail = models.CharField(max_length=200, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.enrollment_id}: {self.kind}"


class CalendarFeed(models.Model):
    """A learner's ICS feed. Only the sha256 of the URL token is stored: the full URL is shown
    once at creation (rotate to get a new one). The coach may say "in your calendar" only when a
    live feed exists AND `subscription_confirmed_at` is set (see selectors)."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="calendar_feeds")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    subscription_confirmed_at = models.DateTimeField(null=True, blank=True)
    last_fetched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["learner"], condition=models.Q(revoked_at__isnull=True),
                name="calendarfeed_one_live_per_learner",
            ),
        ]

    def __str__(self) -> str:
        return f"calendar feed of {self.learner_id}"


class ReminderStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"
    SKIPPED = "skipped", "Skipped"


class ReminderDelivery(models.Model):
    """One check-in prompt per learner per slot (local date + kind): the unique constraint is what
    makes the periodic task idempotent, however often beat fires."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="reminders")
    slot = models.CharField(max_length=40)  # e.g. "checkin:2026-03-29" (learner-local date)
    message = models.ForeignKey(Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    channel = models.CharField(max_length=12)  # in_app | webhook | email
    status = models.CharField(max_length=10, choices=ReminderStatus.choices, default=ReminderStatus.PENDING)
    error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["learner", "slot"], name="reminder_once_per_slot")]

    def __str__(self) -> str:
        return f"reminder {self.slot} → {self.learner_id} [{self.status}]"


class ExportLog(models.Model):
    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="exports")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    via = models.CharField(max_length=12)  # command | api | admin
    format = models.CharField(max_length=10)  # csv | parquet
    schema_version = models.CharField(max_length=10)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Null until the stream has been fully produced; a client that disconnects leaves it null.
    row_count = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"export of {self.study_id} by {self.user_id or '-'} ({self.format})"
