"""Check-in reminders: due at each enrolled learner's best time in their own time zone, written as
an in-app coach message, and pushed to the configured webhook when there is one."""

from __future__ import annotations

import datetime as dt
import json
import logging
import urllib.request
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from coaching.models import Learner, PlannedSession, SessionStatus
from coaching.research import conf
from coaching.research.models import ReminderDelivery, ReminderStatus
from coaching.services import coach_message_post
from core.outbox.services import outbox_enqueue

logger = logging.getLogger(__name__)


def reminder_channel() -> str:
    return "webhook" if conf.reminder_hook().startswith(("http://", "https://")) else "in_app"


def reminder_text(sessions: list[PlannedSession], tz: ZoneInfo) -> str:
    # Deterministic template, no model: tracker-arm learners get exactly this and no coaching.
    listed = ", ".join(
        f"{s.topic or 'session'} at {s.planned_start.astimezone(tz):%H:%M} ({s.duration_minutes} min)" for s in sessions
    )
    return f"Check-in: today you planned {listed}. Did it happen? Reply done, skipped, or tell me how it went."


def _due_slot(learner: Learner, best_time: str, now: dt.datetime) -> tuple[str, dt.date] | None:
    tz = ZoneInfo(learner.timezone or "UTC")
    local = now.astimezone(tz)
    hour, minute = conf.BEST_TIME_CLOCK.get(best_time or "", conf.BEST_TIME_CLOCK[""])
    slot_start = dt.datetime.combine(local.date(), dt.time(hour, minute), tzinfo=tz)
    if not slot_start <= local < slot_start + dt.timedelta(minutes=conf.reminder_window_minutes()):
        return None
    return f"checkin:{local.date().isoformat()}", local.date()


def reminders_send_due(*, now: dt.datetime | None = None) -> int:
    """Send today's check-in prompt to each enrolled, active learner whose best time (in their own
    time zone) has come and who has a session planned today. Unique (learner, slot) rows make a
    second run a no-op. Returns the number of reminders created."""
    now = now or timezone.now()
    created = 0
    enrolled = (
        Learner.objects.filter(enrollments__withdrawn_at__isnull=True).select_related("profile").distinct()
    )
    for learner in enrolled.iterator(chunk_size=500):
        profile = getattr(learner, "profile", None)
        due = _due_slot(learner, profile.best_time if profile else "", now)
        if due is None:
            continue
        slot, local_day = due
        if ReminderDelivery.objects.filter(learner=learner, slot=slot).exists():
            continue
        if reminder_create(learner=learner, slot=slot, local_day=local_day) is not None:
            created += 1
    return created


@transaction.atomic
def reminder_create(*, learner: Learner, slot: str, local_day: dt.date) -> ReminderDelivery | None:
    tz = ZoneInfo(learner.timezone or "UTC")
    day_start = dt.datetime.combine(local_day, dt.time(0, 0), tzinfo=tz)
    sessions = list(
        PlannedSession.objects.filter(
            plan__learner=learner, status=SessionStatus.PLANNED,
            planned_start__gte=day_start, planned_start__lt=day_start + dt.timedelta(days=1),
        ).order_by("planned_start")
    )
    if not sessions:
        return None
    delivery, created = ReminderDelivery.objects.get_or_create(
        learner=learner, slot=slot, defaults={"channel": reminder_channel()}
    )
    if not created:
        return None
    message = coach_message_post(learner=learner, content=reminder_text(sessions, tz), specialist="reminder")
    delivery.message = message
    if delivery.channel == "in_app":
        delivery.status, delivery.sent_at = ReminderStatus.SENT, timezone.now()
        delivery.save(update_fields=["message", "status", "sent_at"])
    else:
        delivery.save(update_fields=["message"])
        outbox_enqueue(
            task_name="research.reminder_deliver", args=[delivery.pk], queue="default",
            dedup_key=f"reminder:{delivery.pk}",
        )
    return delivery


def reminder_deliver(*, delivery_id: int) -> str:
    """Push a pending reminder through the configured webhook. Idempotent: a delivery that is no
    longer pending is left alone."""
    with transaction.atomic():
        delivery = (
            ReminderDelivery.objects.select_for_update(of=("self",)).select_related("learner", "message")
            .filter(pk=delivery_id, status=ReminderStatus.PENDING).first()
        )
        if delivery is None:
            return "gone"
    hook = conf.reminder_hook()
    status, error = ReminderStatus.SENT, ""
    text = delivery.message.content if delivery.message else ""
    try:
        if delivery.channel == "webhook":
            body = json.dumps({
                "learner": str(delivery.learner.research_id), "slot": delivery.slot,
                # The coach message in the learner's conversation, by its public id (as the API names it).
                "message_id": str(delivery.message.public_id) if delivery.message else None, "text": text,
            }).encode("utf-8")
            if not hook.startswith(("http://", "https://")):
                raise ValueError("webhook hook must be an http(s) URL")
            request = urllib.request.Request(  # noqa: S310 (scheme checked above)
                hook, data=body, headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 (configured http(s) URL)
                response.read(0)
        else:  # a row left pending by a channel that no longer exists (the old email channel)
            status, error = ReminderStatus.SKIPPED, f"no delivery for channel {delivery.channel!r}"
    except Exception as exc:  # the hook's failure is recorded; the in-app message already exists
        status, error = ReminderStatus.FAILED, f"{type(exc).__name__}: {exc}"[:300]
        logger.warning("reminder %s delivery failed: %s", delivery_id, error)
    ReminderDelivery.objects.filter(pk=delivery_id, status=ReminderStatus.PENDING).update(
        status=status, error=error, sent_at=timezone.now() if status == ReminderStatus.SENT else None
    )
    return status
