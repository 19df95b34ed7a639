from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter

import pytest

from coaching.models import Learner
from coaching.research import services
from coaching.research.models import Enrollment
from coaching.research.tests import factories as f

pytestmark = pytest.mark.django_db
CATEGORIES = ["language", "programming", "music", "language", "sport", "language", "programming", ""]


def _enrol_all(study, categories):
    api_client = f.client(f"c-{study.pk}")
    return [services.enrollment_create(study=study, learner=f.learner(api_client, goal_category=c)).arm
            for c in categories]


def test_assignment_is_reproducible_from_the_secret_and_order():
    seq = CATEGORIES * 5
    a = services.study_create(name="a", start_date=dt.date(2026, 3, 2), secret="s3cret")
    b = services.study_create(name="b", start_date=dt.date(2026, 3, 2), secret="s3cret")
    c = services.study_create(name="c", start_date=dt.date(2026, 3, 2), secret="different")
    arms_a, arms_b, arms_c = _enrol_all(a, seq), _enrol_all(b, seq), _enrol_all(c, seq)
    assert arms_a == arms_b
    assert arms_a != arms_c  # 40 coin-like draws: equal by chance with negligible probability


def test_stratified_blocks_balance_each_stratum_and_set_learner_arm():
    study = services.study_create(name="bal", start_date=dt.date(2026, 3, 2))
    api_client = f.client()
    learners = [f.learner(api_client, goal_category=c) for c in ["language"] * 12 + ["music"] * 8 + [""] * 4]
    for learner in learners:
        services.enrollment_create(study=study, learner=learner)
    for stratum, n in (("language", 12), ("music", 8), ("unknown", 4)):
        counts = Counter(Enrollment.objects.filter(study=study, stratum=stratum).values_list("arm", flat=True))
        assert counts == {"coach": n // 2, "tracker": n // 2}, stratum  # complete blocks of 4 balance
    for e in Enrollment.objects.filter(study=study):
        assert Learner.objects.get(pk=e.learner_id).study_arm == e.arm
    # The allocation can be re-derived (audited) from the secret, stratum and slot alone.
    for e in Enrollment.objects.filter(study=study):
        assert services.arm_for_slot(study=study, stratum=e.stratum, index=e.stratum_index) == e.arm


def test_enrolling_twice_returns_the_same_enrollment():
    study = services.study_create(name="twice", start_date=dt.date(2026, 3, 2))
    learner = f.learner(f.client())
    first = services.enrollment_create(study=study, learner=learner)
    assert services.enrollment_create(study=study, learner=learner).pk == first.pk
    assert Enrollment.objects.count() == 1


def test_date_shift_is_whole_weeks_within_bound_and_per_participant():
    study = services.study_create(name="shift", start_date=dt.date(2026, 3, 2), date_shift_enabled=True)
    shifts = {services.date_shift_for(study=study, research_id=str(i)) for i in range(200)}
    assert all(s % 7 == 0 and abs(s) <= 26 * 7 for s in shifts)
    assert len(shifts) > 10


def test_date_shift_applies_to_week_start_keeping_intervals():
    from coaching.research.export import export_records

    study = services.study_create(name="shift2", start_date=dt.date(2026, 3, 2), duration_weeks=3,
                                  date_shift_enabled=True)
    learner = f.learner(f.client())
    e = services.enrollment_create(study=study, learner=learner, enrolled_at=f.local("UTC", 2026, 3, 2, 9))
    rows = list(export_records(study=study, exported_at=dt.datetime(2026, 6, 1, tzinfo=dt.UTC)))
    starts = [r["week_start"] for r in rows]
    assert starts[0] == dt.date(2026, 3, 2) + dt.timedelta(days=e.date_shift_days)
    assert [(b - a).days for a, b in itertools.pairwise(starts)] == [7, 7]
    assert all(s.weekday() == 0 for s in starts)


def test_invalid_arms_rejected():
    with pytest.raises(services.ResearchError):
        services.study_create(name="bad", start_date=dt.date(2026, 3, 2), arms=["coach", "placebo"])
    with pytest.raises(services.ResearchError):
        services.study_create(name="bad2", start_date=dt.date(2026, 3, 2), arms=["coach"])
