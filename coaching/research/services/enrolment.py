"""Enrolment: stratified randomisation into a study arm with a frozen baseline, withdrawal, and
the rule that a learner's delivered treatment follows their active enrolment."""

from __future__ import annotations

import datetime as dt
import logging
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from coaching.models import Learner, LearnerProfile
from coaching.research.models import Enrollment, Study
from coaching.research.selectors import active_enrollment_for_learner, study_end_date
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
