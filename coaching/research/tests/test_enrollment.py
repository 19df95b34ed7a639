from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter

import pytest

from coaching.models import Learner
from coaching.research import services
from coaching.research.models import Enrollment
from coaching.research.tests import factories as f
from coaching.research.tests.factories import INTENDED_USE
from core.errors import ApplicationError

pytestmark = pytest.mark.django_db
IN_STUDY = dt.datetime(2026, 3, 3, 9, tzinfo=dt.UTC)  # inside every study below (they start 2 March)
CATEGORIES = ["language", "programming", "music", "language", "sport", "language", "programming", ""]


def _enrol_all(study, categories):
    api_client = f.client(f"c-{study.pk}")
    return [services.enrollment_create(study=study, learner=f.learner(api_client, goal_category=c),
                                       enrolled_at=IN_STUDY).arm
            for c in categories]


def test_assignment_is_reproducible_from_the_secret_and_order():
    seq = CATEGORIES * 5
    a = services.study_create(**INTENDED_USE, name="a", start_date=dt.date(2026, 3, 2), secret="s3cret")
    b = services.study_create(**INTENDED_USE, name="b", start_date=dt.date(2026, 3, 2), secret="s3cret")
    c = services.study_create(**INTENDED_USE, name="c", start_date=dt.date(2026, 3, 2), secret="different")
    arms_a, arms_b, arms_c = _enrol_all(a, seq), _enrol_all(b, seq), _enrol_all(c, seq)
    assert arms_a == arms_b
    assert arms_a != arms_c  # 40 coin-like draws: equal by chance with negligible probability


def test_stratified_blocks_balance_each_stratum_and_set_learner_arm():
    study = services.study_create(**INTENDED_USE, name="bal", start_date=dt.date(2026, 3, 2))
    api_client = f.client()
    learners = [f.learner(api_client, goal_category=c) for c in ["language"] * 12 + ["music"] * 8 + [""] * 4]
    for learner in learners:
        services.enrollment_create(study=study, learner=learner, enrolled_at=IN_STUDY)
    for stratum, n in (("language", 12), ("music", 8), ("unknown", 4)):
        counts = Counter(Enrollment.objects.filter(study=study, stratum=stratum).values_list("arm", flat=True))
        assert counts == {"coach": n // 2, "tracker": n // 2}, stratum  # complete blocks of 4 balance
    for e in Enrollment.objects.filter(study=study):
        assert Learner.objects.get(pk=e.learner_id).study_arm == e.arm
    # The allocation can be re-derived (audited) from the secret, stratum and slot alone.
    for e in Enrollment.objects.filter(study=study):
        assert services.arm_for_slot(study=study, stratum=e.stratum, index=e.stratum_index) == e.arm


def test_enrolling_twice_returns_the_same_enrollment():
    study = services.study_create(**INTENDED_USE, name="twice", start_date=dt.date(2026, 3, 2))
    learner = f.learner(f.client())
    first = services.enrollment_create(study=study, learner=learner, enrolled_at=IN_STUDY)
    assert services.enrollment_create(study=study, learner=learner, enrolled_at=IN_STUDY).pk == first.pk
    assert Enrollment.objects.count() == 1


def test_study_date_shift_is_one_nonzero_whole_week_offset_that_depends_on_the_study():
    studies = [services.study_create(**INTENDED_USE,
                                     name=f"shift{i}", start_date=dt.date(2026, 3, 2), date_shift_enabled=True,
                                     secret="one-secret") for i in range(60)]
    shifts = [services.study_date_shift_days(study=s) for s in studies]
    assert all(s % 7 == 0 and s != 0 and abs(s) <= 26 * 7 for s in shifts)
    assert len(set(shifts)) > 20  # the same secret, different studies: different offsets
    assert services.study_date_shift_days(study=studies[0]) == shifts[0]  # deterministic


def _export(study, as_of=dt.datetime(2026, 6, 1, tzinfo=dt.UTC)):
    from coaching.research.export import export_records

    return list(export_records(study=study, exported_at=as_of))


def test_date_shift_cannot_be_undone_from_the_file():
    """Point 6. Before: each participant had their own offset, and week_start - 7·(study_week - 1)
    gave it back exactly. Now one study-wide offset: that expression is the same shifted Monday
    for everybody, it is not the real study Monday, exported_at moves with it, and the codebook
    and the `dates_shifted` column say so."""
    from coaching.research.codebook import codebook_markdown

    shifted = services.study_create(**INTENDED_USE, name="shifted", start_date=dt.date(2026, 3, 4), duration_weeks=4,
                                    date_shift_enabled=True)
    plain = services.study_create(**INTENDED_USE, name="plain", start_date=dt.date(2026, 3, 4), duration_weeks=4)
    api_client = f.client()
    for i in range(6):
        for study in (shifted, plain):
            learner = f.learner(api_client, tz=["UTC", "Europe/Berlin", "America/New_York"][i % 3])
            services.enrollment_create(study=study, learner=learner, enrolled_at=f.local("UTC", 2026, 3, 2 + i, 9))
    real_monday = dt.date(2026, 3, 2)
    offset = dt.timedelta(days=services.study_date_shift_days(study=shifted))
    rows = _export(shifted)
    anchors = {r["week_start"] - dt.timedelta(days=7 * (r["study_week"] - 1)) for r in rows}
    assert anchors == {real_monday + offset} and real_monday not in anchors
    assert [(b["week_start"] - a["week_start"]).days for a, b in itertools.pairwise(rows)
            if a["participant_id"] == b["participant_id"]] == [7] * (len(rows) - 6)
    assert all(r["week_start"].weekday() == 0 and r["dates_shifted"] is True for r in rows)
    assert {r["exported_at"] for r in rows} == {dt.datetime(2026, 6, 1, tzinfo=dt.UTC) + offset}
    plain_rows = _export(plain)
    assert {r["week_start"] - dt.timedelta(days=7 * (r["study_week"] - 1)) for r in plain_rows} == {real_monday}
    assert not any(r["dates_shifted"] for r in plain_rows)
    assert "Dates: shifted" in codebook_markdown(shifted) and "Dates: not shifted" in codebook_markdown(plain)


def test_participant_ids_differ_between_studies_with_the_same_secret():
    """Point 8. Before: HMAC(secret, research_id) only, so two studies given one secret shared ids."""
    a = services.study_create(**INTENDED_USE,
                              name="ida", start_date=dt.date(2026, 3, 2), duration_weeks=2, secret="shared")
    b = services.study_create(**INTENDED_USE,
                              name="idb", start_date=dt.date(2026, 3, 2), duration_weeks=2, secret="shared")
    api_client = f.client()
    learners = [f.learner(api_client) for _ in range(5)]
    for learner in learners:
        services.enrollment_create(study=a, learner=learner, enrolled_at=IN_STUDY)
    ids_a = [r["participant_id"] for r in _export(a)]
    for learner in learners:  # the same people in study b once they have left study a
        learner.enrollments.filter(study=a).update(withdrawn_at=IN_STUDY + dt.timedelta(hours=1))
        services.enrollment_create(study=b, learner=learner, enrolled_at=IN_STUDY + dt.timedelta(hours=2))
    ids_b = [r["participant_id"] for r in _export(b)]
    assert len(set(ids_a)) == len(set(ids_b)) == 5
    assert not set(ids_a) & set(ids_b)
    assert set(ids_a) == {r["participant_id"] for r in _export(a)}  # stable across exports
    assert all(p.startswith("p") and len(p) == 17 and int(p[1:], 16) >= 0 for p in ids_a + ids_b)


def test_baseline_is_frozen_at_enrolment():
    """Point 1. Before: goal_category, weekly_hours, best_time and confidence were read from the
    current profile, so a profile edit rewrote past rows. Now they are the copies stored with the
    enrolment; `stratum` is the stored stratum."""
    from coaching.models import LearnerProfile

    study = services.study_create(**INTENDED_USE, name="baseline", start_date=dt.date(2026, 3, 2), duration_weeks=3)
    learner = f.learner(f.client(), goal_category="music", weekly_hours=5.0, best_time="evening", confidence=8,
                        tz="Europe/Berlin")
    services.enrollment_create(study=study, learner=learner, enrolled_at=IN_STUDY)
    before = _export(study)
    LearnerProfile.objects.filter(learner=learner).update(goal_category="art", weekly_hours=8.0, best_time="morning",
                                                          confidence=10)
    learner.timezone = "Asia/Tokyo"
    learner.save()
    after = _export(study)
    # The move itself is visible (timezone_at_export, issue 34 point 9); nothing else changes.
    assert {r.pop("timezone_at_export") for r in before} == {"Europe/Berlin"}
    assert {r.pop("timezone_at_export") for r in after} == {"Asia/Tokyo"}
    assert before == after
    assert {(r["goal_category"], r["weekly_hours"], r["best_time"], r["confidence"], r["stratum"], r["timezone"])
            for r in after} == {("music", 5.0, "evening", 8, "music", "Europe/Berlin")}


def test_enrolment_overlapping_another_study_is_refused_and_treatment_follows_the_active_one(clock):
    """Point 3. Before: a second enrolment silently overwrote Learner.study_arm, the treatment the
    engine delivers. Now an overlapping enrolment is refused with a clear error, a later one (after
    the first ended or was withdrawn) is allowed, and while enrolled study_arm is the arm of the
    active enrolment whatever is saved."""
    first = services.study_create(**INTENDED_USE, name="first", start_date=dt.date(2026, 3, 2), duration_weeks=4)
    second = services.study_create(**INTENDED_USE, name="second", start_date=dt.date(2026, 3, 16), duration_weeks=4)
    later = services.study_create(**INTENDED_USE, name="later", start_date=dt.date(2026, 4, 6), duration_weeks=4)
    api_client = f.client()
    learners = [f.learner(api_client, goal_category=c) for c in ["music", "art"] * 4]
    arms = {}
    for learner in learners:
        arms[learner.pk] = services.enrollment_create(study=first, learner=learner, enrolled_at=IN_STUDY).arm
    for learner in learners:
        with pytest.raises(ApplicationError) as refused:
            services.enrollment_create(study=second, learner=learner, enrolled_at=f.local("UTC", 2026, 3, 17, 9))
        assert refused.value.code == "enrolment_conflict" and "'first'" in refused.value.message
        assert "withdraw" in refused.value.message
        assert Learner.objects.get(pk=learner.pk).study_arm == arms[learner.pk]
    assert not Enrollment.objects.filter(study=second).exists()

    # Treatment cannot be edited away from the active enrolment's arm (admin or API save).
    clock.set(f.local("UTC", 2026, 3, 20, 12))
    learner = Learner.objects.get(pk=learners[0].pk)
    learner.study_arm = "tracker" if arms[learner.pk] == "coach" else "coach"
    learner.save()
    assert Learner.objects.get(pk=learner.pk).study_arm == arms[learner.pk]
    clock.set(f.local("UTC", 2026, 4, 20, 12))  # the first study is over: the field is free again
    learner.study_arm = "tracker" if arms[learner.pk] == "coach" else "coach"
    learner.save()
    assert Learner.objects.get(pk=learner.pk).study_arm == learner.study_arm

    # Withdrawn from the first study: the second one may enrol them, and its arm is delivered.
    services.enrollment_withdraw(enrollment=Enrollment.objects.get(study=first, learner=learners[1]),
                                 at=f.local("UTC", 2026, 3, 17, 8))
    moved = services.enrollment_create(study=second, learner=learners[1], enrolled_at=f.local("UTC", 2026, 3, 17, 9))
    assert Learner.objects.get(pk=learners[1].pk).study_arm == moved.arm
    # After the first study ended (29 March), a later study needs no withdrawal.
    after = services.enrollment_create(study=later, learner=learners[2], enrolled_at=f.local("UTC", 2026, 4, 6, 9))
    assert Learner.objects.get(pk=learners[2].pk).study_arm == after.arm
    # The first study's export still shows each participant's own arm in it.
    rows = _export(first, as_of=dt.datetime(2026, 4, 20, tzinfo=dt.UTC))
    assert sorted(r["arm"] for r in rows if r["study_week"] == 1) == sorted(arms.values())


def test_enrolling_in_an_ended_study_is_refused():
    study = services.study_create(**INTENDED_USE, name="over", start_date=dt.date(2026, 3, 2), duration_weeks=2)
    with pytest.raises(ApplicationError) as refused:
        services.enrollment_create(study=study, learner=f.learner(f.client()), enrolled_at=f.local("UTC", 2026, 4, 1))
    assert refused.value.code == "study_ended"


def test_invalid_arms_rejected():
    with pytest.raises(ApplicationError):
        services.study_create(**INTENDED_USE, name="bad", start_date=dt.date(2026, 3, 2), arms=["coach", "placebo"])
    with pytest.raises(ApplicationError):
        services.study_create(**INTENDED_USE, name="bad2", start_date=dt.date(2026, 3, 2), arms=["coach"])
