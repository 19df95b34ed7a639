"""Enrolment: stratified randomisation into a study arm with a frozen baseline, withdrawal, and
the rule that a learner's delivered treatment follows their active enrolment."""

from __future__ import annotations

import datetime as dt
import logging
from zoneinfo import ZoneInfo

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from coaching.models import Learner, LearnerProfile
from coaching.research.models import Enrollment, EnrollmentEvent, Study
from coaching.research.selectors import active_enrollment_for_learner, study_end_date, study_monday
from coaching.research.services.studies import arm_for_slot
from core.errors import ApplicationError

logger = logging.getLogger(__name__)

UNKNOWN_STRATUM = "unknown"


def _baseline_from_profile(profile: LearnerProfile | None) -> dict[str, object]:
    if profile is None:
        return {"baseline_goal_category": "", "baseline_weekly_hours": None, "baseline_best_time": "",
                "baseline_confidence": None}
    return {"baseline_goal_category": profile.goal_category or "", "baseline_weekly_hours": profile.weekly_hours,
            "baseline_best_time": profile.best_time or "", "baseline_confidence": profile.confidence}


def _enrollment_interval(enrollment: Enrollment) -> tuple[dt.datetime, dt.datetime]:
    """[enrolled_at, end) where end is the withdrawal or the study's end (local midnight after
    its last week, in the enrolment's time zone), whichever comes first."""
    tz = ZoneInfo(enrollment.timezone or "UTC")
    end = dt.datetime.combine(study_end_date(enrollment.study), dt.time(0, 0), tzinfo=tz)
    if enrollment.withdrawn_at is not None:
        end = min(end, enrollment.withdrawn_at)
    # Treatment starts with the study: an enrolment made ahead of time does not overlap the study
    # the learner is still in.
    study_start = dt.datetime.combine(study_monday(enrollment.study), dt.time(0, 0), tzinfo=tz)
    return max(enrollment.enrolled_at, study_start), end


def _event(enrollment: Enrollment, kind: str, detail: str = "") -> EnrollmentEvent:
    return EnrollmentEvent.objects.create(enrollment=enrollment, kind=kind, detail=detail[:200])


@transaction.atomic
def enrollment_create(*, study: Study, learner: Learner, enrolled_at: dt.datetime | None = None) -> Enrollment:
    """Randomise `learner` into an arm, stratified by goal category (permuted blocks per stratum),
    freeze their baseline (profile answers and time zone) and audit it (`enrolled`). Enrolling a
    learner already enrolled (and not withdrawn) returns that enrolment; re-enrolling a withdrawn
    learner is refused (`re_enrolment_refused`): randomisation happens once per participant.

    `Learner.study_arm`, which decides the treatment the coaching engine delivers, is set now
    only when the enrolment is already in force (its study has started); an enrolment made ahead
    of its study's start gets its arm applied at the start by `enrollment_arms_apply` (a periodic,
    idempotent task), so the learner keeps the treatment of the study they are still in.

    A learner whose enrolment in another study overlaps this one in time is refused
    (`enrolment_conflict`): the engine can deliver one treatment at a time, and the other study's
    export would otherwise show an arm the learner no longer receives. The refusal does not look
    at which arm this study would draw: refusing only on a differing arm would make who gets
    enrolled depend on the allocation, which breaks the randomisation. Withdraw the learner from
    the other study (or wait until it ends) first."""
    existing = Enrollment.objects.filter(study=study, learner=learner).first()
    if existing is not None:
        if existing.withdrawn_at is not None:
            raise ApplicationError(
                f"learner withdrew from study {study.name!r} on {existing.withdrawn_at:%Y-%m-%d}; a participant is "
                "randomised once and cannot be enrolled in the same study again",
                code="re_enrolment_refused", field="learner", status=409)
        return existing
    # Serialise enrolments per study so two concurrent ones cannot take the same stratum slot,
    # and per learner so two studies cannot enrol the same learner at once.
    Study.objects.select_for_update().filter(pk=study.pk).first()
    Learner.objects.select_for_update().filter(pk=learner.pk).first()
    enrolled_at = enrolled_at or timezone.now()
    profile = LearnerProfile.objects.filter(learner=learner).first()
    candidate = Enrollment(
        study=study, learner=learner, research_id=learner.research_id, enrolled_at=enrolled_at,
        timezone=learner.timezone or "UTC", **_baseline_from_profile(profile),
    )
    start, end = _enrollment_interval(candidate)
    if end <= start:
        raise ApplicationError(f"study {study.name!r} has ended; nobody can be enrolled in it", code="study_ended",
                               field="study")
    for other in Enrollment.objects.filter(learner=learner).exclude(study=study).select_related("study"):
        other_start, other_end = _enrollment_interval(other)
        if other_start < end and start < other_end:
            raise ApplicationError(
                f"learner is enrolled in study {other.study.name!r} (arm {other.arm}) until "
                f"{other_end:%Y-%m-%d}; withdraw them from it or wait until it ends before enrolling "
                f"them in {study.name!r}",
                code="enrolment_conflict", field="learner",
            )
    candidate.stratum = candidate.baseline_goal_category or UNKNOWN_STRATUM
    # The next free slot, not a count: a slot is never reused, whatever happened to other rows.
    taken = Enrollment.objects.filter(study=study, stratum=candidate.stratum).aggregate(top=Max("stratum_index"))
    candidate.stratum_index = 0 if taken["top"] is None else taken["top"] + 1
    candidate.arm = arm_for_slot(study=study, stratum=candidate.stratum, index=candidate.stratum_index)
    candidate.save()
    _event(candidate, EnrollmentEvent.ENROLLED, f"arm {candidate.arm}, stratum {candidate.stratum} "
                                                f"slot {candidate.stratum_index}")
    if active_enrollment_for_learner(learner.pk, at=enrolled_at) == candidate:
        _arm_apply(candidate, learner)
    return candidate


def _arm_apply(enrollment: Enrollment, learner: Learner) -> bool:
    """Set the learner's delivered treatment to the enrolment's arm; audited when it changes."""
    if learner.study_arm == enrollment.arm and _applied(enrollment):
        return False
    Learner.objects.filter(pk=learner.pk).update(study_arm=enrollment.arm)
    previous, learner.study_arm = learner.study_arm, enrollment.arm
    _event(enrollment, EnrollmentEvent.ARM_APPLIED, f"study_arm {previous} -> {enrollment.arm}")
    return True


def _applied(enrollment: Enrollment) -> bool:
    return EnrollmentEvent.objects.filter(enrollment=enrollment, kind=EnrollmentEvent.ARM_APPLIED).exists()


def enrollment_arms_apply(*, now: dt.datetime | None = None) -> int:
    """The periodic task behind `research.enrollment_arms_apply`: every learner whose enrolment is
    in force at `now` (its study has started, not withdrawn, not over) gets that enrolment's arm
    as their delivered treatment, with an `arm_applied` event. Idempotent: a learner already on
    the arm, with the event written, is left alone. Returns how many learners changed."""
    now = now or timezone.now()
    changed = 0
    candidates = (Enrollment.objects.filter(withdrawn_at__isnull=True, learner__isnull=False, enrolled_at__lte=now)
                  .values_list("learner_id", flat=True).distinct())
    for learner_id in candidates.iterator(chunk_size=500):
        with transaction.atomic():
            learner = Learner.objects.select_for_update().filter(pk=learner_id).first()
            enrollment = active_enrollment_for_learner(learner_id, at=now) if learner is not None else None
            if enrollment is not None and _arm_apply(enrollment, learner):
                changed += 1
    return changed


def learner_treatment_follows_enrollment(sender: type, instance: Learner, update_fields: frozenset[str] | None = None,
                                         raw: bool = False, **kwargs: object) -> None:
    """pre_save receiver on coaching.Learner (connected in apps.py). While a learner is enrolled,
    `study_arm` (what the engine reads to choose coach or tracker treatment) is the arm of the
    enrolment in force: an edit through the admin or the API cannot make the delivered treatment
    drift from the exported arm. Outside a study the field is left as set."""
    if raw or instance.pk is None or (update_fields is not None and "study_arm" not in update_fields):
        return  # a fixture load, a new learner, or a save that does not touch the arm
    enrollment = active_enrollment_for_learner(instance.pk)
    if enrollment is not None and instance.study_arm != enrollment.arm:
        logger.warning("learner %s: study_arm %r kept at %r, the arm of their enrolment in study %s",
                       instance.pk, instance.study_arm, enrollment.arm, enrollment.study_id)
        instance.study_arm = enrollment.arm


@transaction.atomic
def enrollment_withdraw(*, enrollment: Enrollment, at: dt.datetime | None = None, reason: str = "") -> Enrollment:
    """Withdraw a participant (once; a second call changes nothing). Audited (`withdrawn`). The
    rows up to the withdrawal week stay in every later export (intention to treat)."""
    enrollment = Enrollment.objects.select_for_update().get(pk=enrollment.pk)
    if enrollment.withdrawn_at is None:
        enrollment.withdrawn_at = at or timezone.now()
        enrollment.save(update_fields=["withdrawn_at"])
        _event(enrollment, EnrollmentEvent.WITHDRAWN, reason)
    return enrollment


def enrollments_keep_on_learner_delete(sender: type, instance: Learner, **kwargs: object) -> None:
    """pre_delete receiver on identity.Learner (connected in apps.py): whoever deletes the learner
    (the erasure API, the admin), `enrollments_learner_erased` runs first in the same transaction."""
    enrollments_learner_erased(learner=instance)


@transaction.atomic
def enrollments_learner_erased(*, learner: Learner) -> int:
    """Runs before a learner row is deleted (`enrollments_keep_on_learner_delete`): each enrolment stays as a
    pseudonymous stub (study, arm, stratum, slot, baseline copies, research_id, dates); one still
    running is withdrawn at the erasure, since nothing more can be observed. Audited
    (`learner_erased`). Returns the number of enrolments kept."""
    kept = 0
    for enrollment in Enrollment.objects.select_for_update().filter(learner=learner):
        if enrollment.research_id is None:
            enrollment.research_id = learner.research_id
            enrollment.save(update_fields=["research_id"])
        if enrollment.withdrawn_at is None:
            enrollment_withdraw(enrollment=enrollment, reason="learner erased")
        _event(enrollment, EnrollmentEvent.LEARNER_ERASED, "learner deleted; enrolment kept as a pseudonymous stub")
        kept += 1
    return kept
