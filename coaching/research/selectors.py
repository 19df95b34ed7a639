"""Research reads: calendar feeds, studies and enrolments. The adherence query lives in
`coaching.research.adherence`."""

from __future__ import annotations

import datetime as dt
from uuid import UUID

from django.utils import timezone

from coaching.models import PlannedSession
from coaching.research.models import CalendarFeed, Enrollment, Study
from coaching.research.sql_dialect import zone

# --- calendar ----------------------------------------------------------------------------------

def calendar_subscription_confirmed(learner_id: int) -> bool:
    """True only when a live (unrevoked) feed exists AND the learner confirmed subscribing to it.
    The coach must not say "it's in your calendar" otherwise. Called lazily by coaching."""
    return CalendarFeed.objects.filter(
        learner_id=learner_id, revoked_at__isnull=True, subscription_confirmed_at__isnull=False
    ).exists()


def calendar_feed_by_token_hash(token_hash: str) -> CalendarFeed | None:
    return CalendarFeed.objects.filter(token_hash=token_hash, revoked_at__isnull=True).select_related("learner").first()


def calendar_feed_sessions(*, learner_id: int, since: dt.datetime) -> list[PlannedSession]:
    return list(
        PlannedSession.objects.filter(plan__learner_id=learner_id, planned_start__gte=since).order_by("planned_start")
    )


# --- studies -----------------------------------------------------------------------------------

def study_find(ref: str) -> Study | None:
    """A study named by staff: its id (UUID, what the API, the admin and export file names show),
    its exact name, or its admin row number."""
    try:
        return Study.objects.filter(public_id=UUID(ref)).first()
    except ValueError:
        pass
    return Study.objects.filter(name=ref).first() or (Study.objects.filter(pk=int(ref)).first()
                                                      if ref.isdigit() else None)


def study_monday(study: Study) -> dt.date:
    return study.start_date - dt.timedelta(days=study.start_date.weekday())


def study_end_date(study: Study) -> dt.date:
    """First local day after the study's last week (exclusive end)."""
    return study_monday(study) + dt.timedelta(weeks=int(study.duration_weeks))


def active_enrollment_for_learner(learner_id: int, *, at: dt.datetime | None = None) -> Enrollment | None:
    """The enrolment whose treatment the learner receives at `at` (default now): made, its study
    started (week 1 has begun) and not over in the enrolment's time zone, and not withdrawn.
    Enrolment refuses overlaps, so there is at most one; an enrolment made ahead of its study's
    start is not in force until then."""
    at = at or timezone.now()
    candidates = (
        Enrollment.objects.filter(learner_id=learner_id, enrolled_at__lte=at)
        .exclude(withdrawn_at__lte=at).select_related("study").order_by("-enrolled_at")
    )
    for enrollment in candidates:
        local_day = at.astimezone(zone(enrollment.timezone or "UTC")).date()
        if study_monday(enrollment.study) <= local_day < study_end_date(enrollment.study):
            return enrollment
    return None


def study_enrollment_counts(study: Study) -> dict[str, dict[str, int]]:
    """Per arm: enrolled, withdrawn (drop-outs), active."""
    out: dict[str, dict[str, int]] = {arm: {"enrolled": 0, "withdrawn": 0, "active": 0} for arm in study.arms}
    for e in Enrollment.objects.filter(study=study).values("arm", "withdrawn_at"):
        row = out.setdefault(e["arm"], {"enrolled": 0, "withdrawn": 0, "active": 0})
        row["enrolled"] += 1
        row["withdrawn" if e["withdrawn_at"] else "active"] += 1
    return out
