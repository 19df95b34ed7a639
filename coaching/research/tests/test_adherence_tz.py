"""Weeks are the ISO weeks of each learner's LOCAL time, DST included."""

from __future__ import annotations

import datetime as dt

import pytest

from coaching.research import services
from coaching.research.adherence import ADHERENCE_COLUMNS, adherence_rows
from coaching.research.export import csv_chunks, export_records, pseudonymous_id
from coaching.research.tests import factories as f
from coaching.research.tests.factories import INTENDED_USE

pytestmark = pytest.mark.django_db
AS_OF = dt.datetime(2027, 1, 1, tzinfo=dt.UTC)


def _by_week(study, learner_id):
    short = {"planned_sessions": "planned", "completed_sessions": "completed", "planned_minutes": "pmin",
             "completed_minutes": "cmin", "adherence_ratio": "ratio"}
    out = {}
    for row in adherence_rows(study=study, as_of=AS_OF):
        rec = {short.get(name, name): value for name, value in zip(ADHERENCE_COLUMNS, row, strict=True)}
        if rec["learner_id"] == learner_id:
            out[rec["study_week"]] = rec
    return out


def _weeks_across_dst(tz: str, study_start: dt.date, sunday: dt.date):
    """One learner in `tz`; a completed session Sunday 23:30 local (last day of study week 2)
    and a planned one Monday 00:30 local (first day of week 3), the Sunday being a DST change day."""
    study = services.study_create(**INTENDED_USE, name=f"dst-{tz}-{sunday}", start_date=study_start, duration_weeks=4)
    learner = f.learner(f.client(), tz=tz)
    services.enrollment_create(study=study, learner=learner, enrolled_at=f.local(tz, *study_start.timetuple()[:3], 9))
    late = f.local(tz, sunday.year, sunday.month, sunday.day, 23, 30)
    monday = sunday + dt.timedelta(days=1)
    early = f.local(tz, monday.year, monday.month, monday.day, 0, 30)
    f.session(learner, late, minutes=20, status="completed")
    f.session(learner, early, minutes=45)
    return study, learner, late, early


@pytest.mark.parametrize(
    ("tz", "study_start", "sunday"),
    [
        ("Europe/Berlin", dt.date(2026, 3, 16), dt.date(2026, 3, 29)),  # CET→CEST, last Sunday of March
        ("Europe/Berlin", dt.date(2026, 10, 12), dt.date(2026, 10, 25)),  # CEST→CET, last Sunday of October
        ("America/New_York", dt.date(2026, 3, 2), dt.date(2026, 3, 8)),  # EST→EDT, second Sunday of March
        ("America/New_York", dt.date(2026, 10, 19), dt.date(2026, 11, 1)),  # EDT→EST, first Sunday of November
    ],
)
def test_sunday_2330_local_stays_in_its_week_across_dst(tz, study_start, sunday):
    study, learner, late, early = _weeks_across_dst(tz, study_start, sunday)
    # Week of the Sunday relative to the study start's Monday (independent of the SQL).
    sunday_week = (f.monday_of(sunday) - f.monday_of(study_start)).days // 7 + 1
    # The UTC date of at least one of the two sessions falls on the other side of the boundary:
    # a query that ignored the time zone would put both in the same week.
    assert late.astimezone(dt.UTC).date() != sunday or early.astimezone(dt.UTC).date() == sunday
    weeks = _by_week(study, learner.id)
    assert weeks[sunday_week]["planned"] == 1
    assert weeks[sunday_week]["completed"] == 1
    assert weeks[sunday_week]["pmin"] == 20
    assert weeks[sunday_week + 1]["planned"] == 1
    assert weeks[sunday_week + 1]["completed"] == 0
    assert weeks[sunday_week + 1]["pmin"] == 45
    # Active day: the session's own local date (Sunday), so the activity is in the Sunday's week.
    assert weeks[sunday_week]["active_days"] == 1
    assert weeks[sunday_week + 1]["active_days"] == 0
    assert weeks[sunday_week + 1]["last_active_week"] == sunday_week


def test_na_ratio_when_nothing_planned():
    study = services.study_create(**INTENDED_USE, name="na", start_date=dt.date(2026, 3, 2), duration_weeks=3)
    learner = f.learner(f.client(), tz="Asia/Kolkata")
    services.enrollment_create(study=study, learner=learner, enrolled_at=f.local("Asia/Kolkata", 2026, 3, 2, 10))
    f.session(learner, f.local("Asia/Kolkata", 2026, 3, 3, 18), status="completed")
    f.session(learner, f.local("Asia/Kolkata", 2026, 3, 4, 18), status="missed")
    records = list(export_records(study=study, exported_at=AS_OF))
    assert [r["study_week"] for r in records] == [1, 2, 3]
    assert records[0]["adherence_ratio"] == 0.5 and records[0]["adherent"] is False
    assert records[1]["planned_sessions"] == 0
    assert records[1]["adherence_ratio"] is None and records[1]["adherent"] is None
    lines = "".join(csv_chunks(records)).splitlines()
    header = lines[0].split(",")
    week2 = dict(zip(header, lines[2].split(","), strict=True))
    assert week2["adherence_ratio"] == "" and week2["adherent"] == ""  # one convention: empty = missing
    assert week2["planned_sessions"] == "0"


def test_adherent_threshold_is_inclusive_at_point_eight():
    study = services.study_create(**INTENDED_USE, name="threshold", start_date=dt.date(2026, 3, 2), duration_weeks=2)
    learner = f.learner(f.client())
    services.enrollment_create(study=study, learner=learner, enrolled_at=f.local("UTC", 2026, 3, 2))
    for day in range(5):  # week 1: 4 of 5 completed = 0.8 → adherent
        f.session(learner, f.local("UTC", 2026, 3, 2 + day, 9), status="completed" if day else "skipped")
    for day in range(4):  # week 2: 3 of 4 = 0.75 → not adherent
        f.session(learner, f.local("UTC", 2026, 3, 9 + day, 9), status="completed" if day else "missed")
    records = list(export_records(study=study, exported_at=AS_OF))
    assert (records[0]["adherence_ratio"], records[0]["adherent"]) == (0.8, True)
    assert (records[1]["adherence_ratio"], records[1]["adherent"]) == (0.75, False)


def test_rows_stop_at_withdrawal_and_as_of():
    study = services.study_create(**INTENDED_USE, name="dropout", start_date=dt.date(2026, 3, 2), duration_weeks=6)
    a, b = f.learner(f.client()), f.learner(f.client("other"))
    ea = services.enrollment_create(study=study, learner=a, enrolled_at=f.local("UTC", 2026, 3, 2))
    services.enrollment_create(study=study, learner=b, enrolled_at=f.local("UTC", 2026, 3, 10))  # week 2
    services.enrollment_withdraw(enrollment=ea, at=f.local("UTC", 2026, 3, 18))  # week 3
    weeks = {}
    for row in adherence_rows(study=study, as_of=f.local("UTC", 2026, 3, 31)):  # week 5
        # Keyed by the learner (the first column is the enrolment's id, equal to the learner's only
        # when the two sequences happen to agree, as in a fresh test database).
        weeks.setdefault(row[ADHERENCE_COLUMNS.index("learner_id")], []).append(
            row[ADHERENCE_COLUMNS.index("study_week")])
    assert weeks[a.id] == [1, 2, 3]
    assert weeks[b.id] == [2, 3, 4, 5]


@pytest.mark.embedded
def test_embedded_smoke_dst_week_and_na():
    """Runs on SQLite (embedded default) too: there the local date comes from the registered
    `bloom_local_date` function instead of AT TIME ZONE."""
    study, learner, _, _ = _weeks_across_dst("Europe/Berlin", dt.date(2026, 3, 16), dt.date(2026, 3, 29))
    weeks = _by_week(study, learner.id)
    assert (weeks[2]["planned"], weeks[2]["completed"], weeks[3]["planned"]) == (1, 1, 1)
    assert weeks[1]["planned"] == 0 and weeks[1]["ratio"] is None
    assert weeks[2]["adherent"] == 1


def test_future_and_in_grace_sessions_are_pending_not_missed():
    """Point 2. Before: exported on a Tuesday, a session planned for that Friday made the week
    `planned 1, completed 0, ratio 0.0, adherent 0`. Now a session counts only once it is due
    (planned start + duration + grace); until then it is pending and the week is not complete."""
    study = services.study_create(**INTENDED_USE, name="future", start_date=dt.date(2026, 3, 2), duration_weeks=4)
    api_client = f.client()
    only_friday, mixed = f.learner(api_client), f.learner(api_client)
    for learner in (only_friday, mixed):
        services.enrollment_create(study=study, learner=learner, enrolled_at=f.local("UTC", 2026, 3, 2, 7))
    f.session(only_friday, f.local("UTC", 2026, 3, 13, 18))  # Friday of week 2
    f.session(mixed, f.local("UTC", 2026, 3, 4, 9), status="completed")  # week 1
    f.session(mixed, f.local("UTC", 2026, 3, 9, 9), status="completed")  # Monday of week 2
    f.session(mixed, f.local("UTC", 2026, 3, 10, 8), minutes=30)  # ended 08:30, grace until 10:30
    f.session(mixed, f.local("UTC", 2026, 3, 13, 18))
    tuesday = f.local("UTC", 2026, 3, 10, 10)

    def rows(learner, as_of, **kw):
        pid = pseudonymous_id(study=study, research_id=learner.research_id)
        return [r for r in export_records(study=study, exported_at=as_of, **kw) if r["participant_id"] == pid]

    week2 = rows(only_friday, tuesday)[1]
    assert (week2["planned_sessions"], week2["pending_sessions"], week2["adherence_ratio"], week2["adherent"]) == (
        0, 1, None, None)
    assert week2["week_complete"] is False
    week1, week2 = rows(mixed, tuesday)
    assert week1["week_complete"] is True and (week1["planned_sessions"], week1["completed_sessions"]) == (1, 1)
    assert (week2["planned_sessions"], week2["completed_sessions"], week2["pending_sessions"]) == (1, 1, 2)
    assert week2["adherence_ratio"] == 1.0 and week2["week_complete"] is False
    # Once the grace window is over, the unreported session is a miss (before any task marks it).
    week2 = rows(mixed, f.local("UTC", 2026, 3, 10, 10, 31))[1]
    assert (week2["planned_sessions"], week2["missed_sessions"], week2["pending_sessions"]) == (2, 1, 1)
    # The option leaves the incomplete week out altogether.
    assert [r["study_week"] for r in rows(mixed, tuesday, complete_weeks_only=True)] == [1]
    # After the week (and the Friday session's grace) is over, it is complete.
    week2 = rows(mixed, f.local("UTC", 2026, 3, 16, 1))[1]
    assert week2["week_complete"] is True and week2["pending_sessions"] == 0 and week2["planned_sessions"] == 3


def test_a_report_after_midnight_counts_for_the_sessions_day(clock):
    """Point 7. Before: a session done on Sunday and reported at 00:40 on Monday gave the Sunday
    week `completed 1, checkins 0, active_days 0` (the check-in and active day went to Monday's
    week). Now activity belongs to the session's own local date."""
    from coaching import services as coaching_services

    tz = "Europe/Berlin"
    study = services.study_create(**INTENDED_USE, name="midnight", start_date=dt.date(2026, 3, 2), duration_weeks=3)
    learner = f.learner(f.client(), tz=tz)
    services.enrollment_create(study=study, learner=learner, enrolled_at=f.local(tz, 2026, 3, 2, 9))
    clock.set(f.local(tz, 2026, 3, 7, 12))
    session = coaching_services.session_schedule(learner=learner, start=f.local(tz, 2026, 3, 8, 21),
                                                 duration_minutes=60)
    clock.set(f.local(tz, 2026, 3, 9, 0, 40))  # Monday 00:40: the next study week
    coaching_services.checkin_log(learner=learner, outcome="completed", session=session)
    records = list(export_records(study=study, exported_at=AS_OF))
    sunday_week, monday_week = records[0], records[1]
    assert (sunday_week["completed_sessions"], sunday_week["checkins"], sunday_week["active_days"]) == (1, 1, 1)
    assert (monday_week["checkins"], monday_week["active_days"], monday_week["last_active_week"]) == (0, 0, 1)
