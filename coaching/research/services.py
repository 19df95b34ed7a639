"""Writes for studies, enrolment, calendar feeds, session status, reminders and export logs.
`<noun>_<verb>`, keyword-only, typed, atomic; status changes leave an audit row."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
import random
import secrets
import urllib.request
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from coaching.models import (
    CheckIn,
    CompletionSource,
    Conversation,
    Learner,
    LearnerProfile,
    Message,
    PlannedSession,
    Role,
    SessionStatus,
    SessionStatusChange,
    StudyArm,
)
from coaching.research import conf
from coaching.research.models import (
    CalendarFeed,
    Enrollment,
    ExportLog,
    ReminderDelivery,
    ReminderStatus,
    Study,
)
from core.outbox.services import outbox_enqueue

logger = logging.getLogger(__name__)

UNKNOWN_STRATUM = "unknown"


class ResearchError(Exception):
    """A domain error with a stable code (mapped to the API's error shape)."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.field = code, message, field


def _hmac_bytes(secret: str, label: str) -> bytes:
    return hmac.new(secret.encode("utf-8"), label.encode("utf-8"), hashlib.sha256).digest()


# --- studies and enrolment ---------------------------------------------------------------------

def study_create(
    *, name: str, start_date: dt.date, arms: list[str] | None = None, cohort: str = "",
    duration_weeks: int = 12, date_shift_enabled: bool = False, secret: str | None = None,
) -> Study:
    arms = list(arms or [StudyArm.COACH, StudyArm.TRACKER])
    valid = set(StudyArm.values)
    if len(arms) < 2 or len(set(arms)) != len(arms) or not set(arms) <= valid:
        raise ResearchError("invalid_arms", f"arms must be ≥ 2 distinct values of {sorted(valid)}", "arms")
    kwargs = {"secret": secret} if secret else {}
    return Study.objects.create(
        name=name, start_date=start_date, arms=arms, cohort=cohort, duration_weeks=duration_weeks,
        date_shift_enabled=date_shift_enabled, **kwargs,
    )


def block_arms(*, study: Study, stratum: str, block: int) -> list[str]:
    """The permuted block `block` of a stratum: each arm twice, shuffled by a PRNG seeded with
    HMAC(study secret, stratum:block). Deterministic, so the allocation sequence can be
    regenerated and audited from the secret alone, yet unpredictable without it."""
    arms = list(study.arms) * 2
    seed = int.from_bytes(_hmac_bytes(study.secret, f"block:{stratum}:{block}")[:8], "big")
    random.Random(seed).shuffle(arms)
    return arms


def arm_for_slot(*, study: Study, stratum: str, index: int) -> str:
    size = len(study.arms) * 2
    return block_arms(study=study, stratum=stratum, block=index // size)[index % size]


def study_date_shift_days(*, study: Study) -> int:
    """The one offset (days, a non-zero whole number of weeks within ± DATE_SHIFT_MAX_WEEKS) by
    which a shifted study's export moves every date. One offset for the whole study, not one per
    participant: every row also carries `study_week`, which ties it to the common study calendar,
    so a per-participant offset could be read back as week_start - 7·(study_week - 1). The study's
    own id is part of the HMAC input, so two studies given the same secret still differ."""
    weeks = conf.DATE_SHIFT_MAX_WEEKS
    value = int.from_bytes(_hmac_bytes(study.secret, f"shift:{study.pk}")[:8], "big")
    k = value % (2 * weeks) - weeks  # -weeks .. weeks-1
    return 7 * (k if k < 0 else k + 1)  # skip 0: a "shifted" export must never equal the real dates


def _baseline_from_profile(profile: LearnerProfile | None) -> dict[str, object]:
    if profile is None:
        return {"baseline_goal_category": "", "baseline_weekly_hours": None, "baseline_best_time": "",
                "baseline_confidence": None}
    return {"baseline_goal_category": profile.goal_category or "", "baseline_weekly_hours": profile.weekly_hours,
            "baseline_best_time": profile.best_time or "", "baseline_confidence": profile.confidence}


def _enrollment_interval(enrollment: Enrollment) -> tuple[dt.datetime, dt.datetime]:
    """[enrolled_at, end) where end is the withdrawal or the study's end (local midnight after
    its last week, in the enrolment's time zone), whichever comes first."""
    from coaching.research.selectors import study_end_date

    tz = ZoneInfo(enrollment.timezone or "UTC")
    end = dt.datetime.combine(study_end_date(enrollment.study), dt.time(0, 0), tzinfo=tz)
    if enrollment.withdrawn_at is not None:
        end = min(end, enrollment.withdrawn_at)
    return enrollment.enrolled_at, end


@transaction.atomic
def enrollment_create(*, study: Study, learner: Learner, enrolled_at: dt.datetime | None = None) -> Enrollment:
    """Randomise `learner` into an arm, stratified by goal category (permuted blocks per stratum),
    freeze their baseline (profile answers and time zone), and set `Learner.study_arm`, which
    decides the treatment the coaching engine delivers. Enrolling twice returns the existing
    enrolment.

    A learner whose enrolment in another study overlaps this one in time is refused
    (`enrolment_conflict`): the engine can deliver one treatment at a time, and the other study's
    export would otherwise show an arm the learner no longer receives. The refusal does not look
    at which arm this study would draw: refusing only on a differing arm would make who gets
    enrolled depend on the allocation, which breaks the randomisation. Withdraw the learner from
    the other study (or wait until it ends) first."""
    existing = Enrollment.objects.filter(study=study, learner=learner).first()
    if existing is not None:
        return existing
    # Serialise enrolments per study so two concurrent ones cannot take the same stratum slot,
    # and per learner so two studies cannot enrol the same learner at once.
    Study.objects.select_for_update().filter(pk=study.pk).first()
    Learner.objects.select_for_update().filter(pk=learner.pk).first()
    enrolled_at = enrolled_at or timezone.now()
    profile = LearnerProfile.objects.filter(learner=learner).first()
    candidate = Enrollment(
        study=study, learner=learner, enrolled_at=enrolled_at, timezone=learner.timezone or "UTC",
        **_baseline_from_profile(profile),
    )
    start, end = _enrollment_interval(candidate)
    if end <= start:
        raise ResearchError("study_ended", f"study {study.name!r} has ended; nobody can be enrolled in it", "study")
    for other in Enrollment.objects.filter(learner=learner).exclude(study=study).select_related("study"):
        other_start, other_end = _enrollment_interval(other)
        if other_start < end and start < other_end:
            raise ResearchError(
                "enrolment_conflict",
                f"learner is enrolled in study {other.study.name!r} (arm {other.arm}) until "
                f"{other_end:%Y-%m-%d}; withdraw them from it or wait until it ends before enrolling "
                f"them in {study.name!r}",
                "learner",
            )
    candidate.stratum = candidate.baseline_goal_category or UNKNOWN_STRATUM
    candidate.stratum_index = Enrollment.objects.filter(study=study, stratum=candidate.stratum).count()
    candidate.arm = arm_for_slot(study=study, stratum=candidate.stratum, index=candidate.stratum_index)
    candidate.save()
    Learner.objects.filter(pk=learner.pk).update(study_arm=candidate.arm)
    learner.study_arm = candidate.arm
    return candidate


def learner_treatment_follows_enrollment(sender: type, instance: Learner, update_fields: frozenset[str] | None = None,
                                         raw: bool = False, **kwargs: object) -> None:
    """pre_save receiver on coaching.Learner (connected in apps.py). While a learner is enrolled,
    `study_arm` (what the engine reads to choose coach or tracker treatment) is the arm of the
    active enrolment: an edit through the admin or the API cannot make the delivered treatment
    drift from the exported arm. Outside a study the field is left as set."""
    if raw or instance.pk is None or (update_fields is not None and "study_arm" not in update_fields):
        return  # a fixture load, a new learner, or a save that does not touch the arm
    from coaching.research.selectors import active_enrollment_for_learner

    enrollment = active_enrollment_for_learner(instance.pk)
    if enrollment is not None and instance.study_arm != enrollment.arm:
        logger.warning("learner %s: study_arm %r kept at %r, the arm of their enrolment in study %s",
                       instance.pk, instance.study_arm, enrollment.arm, enrollment.study_id)
        instance.study_arm = enrollment.arm


@transaction.atomic
def enrollment_withdraw(*, enrollment: Enrollment, at: dt.datetime | None = None) -> Enrollment:
    if enrollment.withdrawn_at is None:
        enrollment.withdrawn_at = at or timezone.now()
        enrollment.save(update_fields=["withdrawn_at"])
    return enrollment


# --- calendar ----------------------------------------------------------------------------------

def hash_feed_token(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


@transaction.atomic
def calendar_feed_create(*, learner: Learner) -> tuple[CalendarFeed, str]:
    """Create (or rotate) the learner's feed; returns the feed and the raw token, shown once.
    Rotation revokes the old URL, so the subscription has to be confirmed again."""
    CalendarFeed.objects.filter(learner=learner, revoked_at__isnull=True).update(revoked_at=timezone.now())
    raw = secrets.token_urlsafe(32)
    feed = CalendarFeed.objects.create(learner=learner, token_hash=hash_feed_token(raw))
    return feed, raw


@transaction.atomic
def calendar_subscription_confirm(*, learner: Learner) -> CalendarFeed:
    feed = CalendarFeed.objects.select_for_update().filter(learner=learner, revoked_at__isnull=True).first()
    if feed is None:
        raise ResearchError("no_calendar_feed", "create a calendar feed before confirming the subscription")
    if feed.subscription_confirmed_at is None:
        feed.subscription_confirmed_at = timezone.now()
        feed.save(update_fields=["subscription_confirmed_at"])
    return feed


def calendar_feed_touch(*, feed: CalendarFeed) -> None:
    CalendarFeed.objects.filter(pk=feed.pk).update(last_fetched_at=timezone.now())


def session_uid(session_id: int) -> str:
    return f"session-{session_id}@bloom"


def _session_id_from_uid(uid: str) -> int | None:
    if uid.startswith("session-") and uid.endswith("@bloom"):
        middle = uid[len("session-"):-len("@bloom")]
        if middle.isdigit():
            return int(middle)
    return None


def _as_aware(value: dt.date | dt.datetime, tz: ZoneInfo) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=tz)
    return dt.datetime.combine(value, dt.time(0, 0), tzinfo=tz)  # all-day event: local midnight


@dataclass
class ImportResult:
    matched_uid: int = 0
    matched_time: int = 0
    already_done: int = 0
    unmatched: int = 0
    not_ended: int = 0
    session_ids: list[int] = field(default_factory=list)


@transaction.atomic
def calendar_import(*, learner: Learner, ics: bytes | str, now: dt.datetime | None = None) -> ImportResult:
    """Mark sessions completed (source=calendar) from a learner's exported calendar. An event
    counts as done once it has ended and is not cancelled. Match by our UID first, else by a
    start within ± the match window of a not-yet-completed session. Never overrides a session the
    learner already reported (their word wins)."""
    from icalendar import Calendar

    now = now or timezone.now()
    tz = ZoneInfo(learner.timezone or "UTC")
    try:
        calendar = Calendar.from_ical(ics)
    except ValueError as exc:
        raise ResearchError("invalid_ics", f"not a valid iCalendar file: {exc}", "ics")
    window = dt.timedelta(minutes=conf.calendar_match_window_minutes())
    result = ImportResult()
    sessions = PlannedSession.objects.select_for_update().filter(plan__learner=learner)
    for event in calendar.walk("VEVENT"):
        if str(event.get("STATUS", "")).upper() == "CANCELLED" or event.get("DTSTART") is None:
            continue
        start = _as_aware(event.decoded("DTSTART"), tz)
        if event.get("DTEND") is not None:
            end = _as_aware(event.decoded("DTEND"), tz)
        elif event.get("DURATION") is not None:
            end = start + event.decoded("DURATION")
        else:
            end = start
        if end > now:
            result.not_ended += 1
            continue
        session = None
        by_uid = _session_id_from_uid(str(event.get("UID", "")))
        if by_uid is not None:
            session = sessions.filter(pk=by_uid).first()
            if session is not None:
                result.matched_uid += 1
        if session is None:
            candidates = sessions.filter(
                planned_start__gte=start - window, planned_start__lte=start + window,
                status__in=[SessionStatus.PLANNED, SessionStatus.MISSED],
            )
            session = min(candidates, key=lambda s: abs(s.planned_start - start), default=None)
            if session is not None:
                result.matched_time += 1
        if session is None:
            result.unmatched += 1
            continue
        if session.status in (SessionStatus.COMPLETED, SessionStatus.SKIPPED):
            result.already_done += 1
            continue
        _session_set_status(
            session=session, to_status=SessionStatus.COMPLETED, source="calendar",
            completed_at=end, completion_source=CompletionSource.CALENDAR,
            detail=f"ics uid={str(event.get('UID', ''))[:120]}",
        )
        result.session_ids.append(session.pk)
    return result


def _session_set_status(
    *, session: PlannedSession, to_status: str, source: str, completed_at: dt.datetime | None = None,
    completion_source: str = "", detail: str = "",
) -> None:
    SessionStatusChange.objects.create(
        session=session, from_status=session.status, to_status=to_status, source=source, detail=detail[:200]
    )
    session.status = to_status
    fields = ["status"]
    if to_status == SessionStatus.COMPLETED:
        session.completed_at = completed_at or timezone.now()
        session.completion_source = completion_source
        fields += ["completed_at", "completion_source"]
    session.save(update_fields=fields)


# --- missed sessions ---------------------------------------------------------------------------

@transaction.atomic
def sessions_mark_missed(*, now: dt.datetime | None = None) -> int:
    """Sessions still `planned` whose start + duration + grace has passed, and that have no
    check-in, become `missed` (one audit row each). Idempotent: only `planned` rows move."""
    now = now or timezone.now()
    grace = dt.timedelta(minutes=conf.missed_grace_minutes())
    # Cheap bound in SQL (a session ends at most 600 minutes after it starts), exact test below.
    candidates = (
        PlannedSession.objects.select_for_update(skip_locked=True)
        .filter(status=SessionStatus.PLANNED, planned_start__lt=now - grace)
        .exclude(Exists(CheckIn.objects.filter(session=OuterRef("pk"))))
        .only("id", "planned_start", "duration_minutes", "status")
    )
    due = [s for s in candidates if s.planned_start + dt.timedelta(minutes=s.duration_minutes) + grace <= now]
    if not due:
        return 0
    ids = [s.pk for s in due]
    SessionStatusChange.objects.bulk_create(
        [SessionStatusChange(session_id=pk, from_status=SessionStatus.PLANNED, to_status=SessionStatus.MISSED,
                             source="missed_task") for pk in ids]
    )
    return PlannedSession.objects.filter(pk__in=ids, status=SessionStatus.PLANNED).update(status=SessionStatus.MISSED)


# --- reminders ---------------------------------------------------------------------------------

def reminder_channel() -> str:
    hook = conf.reminder_hook()
    if hook.startswith(("http://", "https://")):
        return "webhook"
    return "email" if hook == "email" else "in_app"


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
    conversation = Conversation.objects.filter(learner=learner).order_by("-created_at").first()
    if conversation is None:
        conversation = Conversation.objects.create(learner=learner)
    message = Message.objects.create(
        conversation=conversation, role=Role.COACH, content=reminder_text(sessions, tz), specialist="reminder"
    )
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
    """Push a pending reminder through the configured hook (webhook or email). Idempotent: a
    delivery that is no longer pending is left alone."""
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
                "message_id": delivery.message_id, "text": text,
            }).encode("utf-8")
            if not hook.startswith(("http://", "https://")):
                raise ValueError("webhook hook must be an http(s) URL")
            request = urllib.request.Request(  # noqa: S310 (scheme checked above)
                hook, data=body, headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 (configured http(s) URL)
                response.read(0)
        elif delivery.channel == "email":
            address = getattr(delivery.learner, "email", "")
            if not address:
                # Learner has no email field yet: record why instead of pretending it was sent.
                status, error = ReminderStatus.SKIPPED, "learner has no email address"
            else:
                from django.core.mail import send_mail

                send_mail("Bloom check-in", text, None, [address])
    except Exception as exc:  # the hook's failure is recorded; the in-app message already exists
        status, error = ReminderStatus.FAILED, f"{type(exc).__name__}: {exc}"[:300]
        logger.warning("reminder %s delivery failed: %s", delivery_id, error)
    ReminderDelivery.objects.filter(pk=delivery_id, status=ReminderStatus.PENDING).update(
        status=status, error=error, sent_at=timezone.now() if status == ReminderStatus.SENT else None
    )
    return status


# --- export logs -------------------------------------------------------------------------------

def export_log_start(*, study: Study, user: AbstractBaseUser | None, via: str, fmt: str) -> ExportLog:
    return ExportLog.objects.create(
        study=study, user=user if (user is not None and user.is_authenticated) else None, via=via, format=fmt,
        schema_version=str(conf.EXPORT_SCHEMA_VERSION),
    )


def export_log_finish(*, log_id: int, row_count: int) -> None:
    ExportLog.objects.filter(pk=log_id).update(row_count=row_count, finished_at=timezone.now())
