"""Rebuild the kind of study a statistician checked the export on, through the project's own
services and in its own past (a settable clock), and check every cell of the written files, as
pandas and pyarrow read them, against an independent computation from the raw tables.

Study "spring": 8 learners in Europe/Berlin and America/New_York, 6 weeks over both spring DST
changes (US 8 March, EU 29 March 2026); sessions completed (self report, some after midnight),
skipped, missed (the periodic task), imported from a calendar file (by UID and by time); 23:30
and 00:30 sessions around week boundaries; a profile edit and a time-zone change after
enrolment; a withdrawal with sessions planned after it; a late enrolment with sessions planned
before it; exported on a Tuesday with sessions later that week (pending) and again after the end.
Study "autumn": the same secret, date shifting on, no cohort, over the autumn DST changes; a
premature enrolment into it is refused while "spring" runs.

The independent computation reads PlannedSession, CheckIn and Message rows with the ORM and
applies the codebook's definitions with zoneinfo in Python; enrolment facts (time zone, baseline,
times) come from what this test did, not from the Enrollment rows."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import hmac
from dataclasses import dataclass
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from icalendar import Calendar, Event

from coaching import services as coaching
from coaching.models import CheckIn, Learner, LearnerProfile, Message, PlannedSession, SessionStatusChange
from coaching.research import services
from coaching.research.codebook import COLUMN_NAMES, COLUMNS, arrow_schema, arrow_type
from coaching.research.models import Enrollment
from coaching.research.tests.factories import INTENDED_USE
from core.errors import ApplicationError
from core.identity import services as identity_services

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pcsv = pytest.importorskip("pyarrow.csv")

pytestmark = pytest.mark.django_db
BERLIN, NEW_YORK = "Europe/Berlin", "America/New_York"
GRACE = dt.timedelta(minutes=120)  # BLOOM_MISSED_GRACE_MINUTES default
CLOSE = dt.timedelta(hours=72)  # conf.WEEK_CLOSE_HOURS: a week closes this long after it ends
SECRET = "one-secret-for-two-studies"


def at(tz: str, *args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=ZoneInfo(tz))


@dataclass
class Participant:
    learner: Learner
    tz: str
    baseline: tuple[str | None, float | None, str | None, int | None]
    enrolled_at: dt.datetime | None = None
    withdrawn_at: dt.datetime | None = None


class Timeline:
    """Events run in time order with the clock set to each one's moment."""

    def __init__(self, clock) -> None:
        self.clock, self.events = clock, []

    def add(self, when: dt.datetime, fn, *args, **kwargs) -> None:
        self.events.append((when, len(self.events), fn, args, kwargs))

    def run_until(self, moment: dt.datetime) -> None:
        self.events.sort(key=lambda e: (e[0], e[1]))
        while self.events and self.events[0][0] <= moment:
            when, _, fn, args, kwargs = self.events.pop(0)
            self.clock.set(when)
            fn(*args, **kwargs)
        self.clock.set(moment)


def ics_for(session: PlannedSession, *, with_uid: bool) -> bytes:
    cal = Calendar()
    cal.add("prodid", "-//learner calendar//EN")
    cal.add("version", "2.0")
    event = Event()
    event.add("uid", services.session_uid(session) if with_uid else f"their-own-{session.pk}@example.org")
    event.add("dtstart", session.planned_start)
    event.add("dtend", session.planned_start + dt.timedelta(minutes=session.duration_minutes))
    cal.add_component(event)
    return cal.to_ical()


def report(learner: Learner, session_id: int, outcome: str) -> None:
    coaching.checkin_log(learner=learner, outcome=outcome, session=PlannedSession.objects.get(pk=session_id))


def import_calendar(learner: Learner, session_id: int, *, with_uid: bool) -> None:
    result = services.calendar_import(learner=learner, ics=ics_for(PlannedSession.objects.get(pk=session_id),
                                                                    with_uid=with_uid))
    # Only the session's own UID is evidence; an event of the learner's at about the same time
    # completes nothing (issue 34 point 2).
    assert result.session_ids == ([PlannedSession.objects.get(pk=session_id).public_id] if with_uid else [])


def say(learner: Learner, text: str) -> None:
    conversation = learner.conversations.order_by("-created_at").first() or coaching.conversation_start(
        learner=learner)
    coaching.message_receive(conversation=conversation, content=text)


def plan(timeline: Timeline, p: Participant, start: dt.datetime, minutes: int, outcome: str) -> None:
    """Schedule now (ahead of time, as the coach does) and arrange what happens to the session:
    done (reported 10 min after the end), late (reported at 00:40 the next local day), skipped
    (said an hour before), calendar / calendar_time (imported from the learner's calendar by our
    UID / by start time, the day after), missed or pending (nothing reported)."""
    session = coaching.session_schedule(learner=p.learner, start=start, duration_minutes=minutes)
    end = start + dt.timedelta(minutes=minutes)
    if outcome == "done":
        timeline.add(end + dt.timedelta(minutes=10), report, p.learner, session.pk, "completed")
    elif outcome == "late":
        next_day = (start.astimezone(ZoneInfo(p.tz)) + dt.timedelta(days=1)).date()
        timeline.add(at(p.tz, next_day.year, next_day.month, next_day.day, 0, 40), report, p.learner, session.pk,
                     "completed")
    elif outcome == "skipped":
        timeline.add(start - dt.timedelta(hours=1), report, p.learner, session.pk, "skipped")
    elif outcome in ("calendar", "calendar_time"):
        timeline.add(end + dt.timedelta(days=1), import_calendar, p.learner, session.pk,
                     with_uid=outcome == "calendar")


OUTCOMES = ["done", "skipped", "missed", "calendar", "done", "late", "missed", "done"]


def build_spring(clock) -> tuple[object, list[Participant], Timeline]:
    timeline = Timeline(clock)
    clock.set(dt.datetime(2026, 2, 20, 12, tzinfo=dt.UTC))
    study = services.study_create(**INTENDED_USE, name="spring", start_date=dt.date(2026, 3, 4), duration_weeks=6,
                                  cohort="2026-spring", secret=SECRET)
    client = identity_services.api_client_create(name="statistician rebuild")
    specs = [  # tz, goal category, weekly hours, best time, confidence
        (BERLIN, "music", "5.0", "evening", 8), (NEW_YORK, "language", "3.5", "morning", 6),
        (BERLIN, "programming", "10.0", "night", 7), (NEW_YORK, "music", "2.0", "midday", 4),
        (BERLIN, "art", "6.5", "afternoon", 9), (NEW_YORK, "language", "1.5", "flexible", 5),
        (BERLIN, "sport", "4.0", "evening", 3), (NEW_YORK, "", None, "", None),
    ]
    people = []
    for i, (tz, category, hours, best, confidence) in enumerate(specs):
        learner = coaching.learner_create(client=client, display_name=f"Person {i}", timezone_name=tz)
        fields = {"primary_goal": f"private goal text {i}"}
        if category:
            fields.update(goal_category=category, weekly_hours=Decimal(hours), best_time=best, confidence=confidence)
        coaching.profile_update(learner=learner, **fields)
        people.append(Participant(learner=learner, tz=tz, baseline=(
            category or None, float(hours) if hours else None, best or None, confidence)))

    def enrol(p: Participant, when: dt.datetime) -> None:
        p.enrolled_at = when
        services.enrollment_create(study=study, learner=p.learner, enrolled_at=when)

    for i, p in enumerate(people):
        when = at(p.tz, 2026, 3, 17, 10) if i == 4 else at(p.tz, 2026, 3, 2, 9)  # person 4 enrols late
        timeline.add(when, enrol, p, when)
    # Sessions, all scheduled in advance: two a week at ordinary times, outcomes rotating.
    for i, p in enumerate(people):
        for week in range(6):
            monday = dt.date(2026, 3, 2) + dt.timedelta(weeks=week)
            tue, thu = monday + dt.timedelta(days=1), monday + dt.timedelta(days=3)
            wed = monday + dt.timedelta(days=2)
            timeline.add(at(p.tz, wed.year, wed.month, wed.day, 20, 5), say, p.learner, f"week {week} note")
            if i == 7 and week == 2:
                continue  # a week with nothing planned: its ratio is missing
            plan(timeline, p, at(p.tz, tue.year, tue.month, tue.day, 18), 45, OUTCOMES[(i + week) % 8])
            plan(timeline, p, at(p.tz, thu.year, thu.month, thu.day, 7, 30), 30, OUTCOMES[(i + 2 * week + 3) % 8])
    # Around the week boundaries of both spring DST changes.
    for p in people:
        plan(timeline, p, at(p.tz, 2026, 3, 8, 23, 30), 30, "late" if p.tz == NEW_YORK else "done")
        plan(timeline, p, at(p.tz, 2026, 3, 9, 0, 30), 20, "skipped")
        plan(timeline, p, at(p.tz, 2026, 3, 29, 23, 30), 20, "calendar_time" if p.tz == BERLIN else "missed")
        plan(timeline, p, at(p.tz, 2026, 3, 30, 0, 30), 25, "missed")
        timeline.add(at(p.tz, 2026, 3, 15, 23, 50), say, p.learner, "late sunday note")
    # Person 4's sessions before their enrolment, person 3's after their withdrawal: not counted.
    plan(timeline, people[4], at(BERLIN, 2026, 3, 10, 12), 30, "done")
    plan(timeline, people[3], at(NEW_YORK, 2026, 3, 19, 12), 30, "done")
    # Later in the export week (Tuesday 31 March): still pending at the first export.
    plan(timeline, people[6], at(BERLIN, 2026, 4, 3, 17), 60, "done")
    plan(timeline, people[7], at(NEW_YORK, 2026, 3, 31, 8), 30, "done")
    # Ended at 09:00 UTC and reported done at 09:10, but still inside its grace window at 10:00.
    plan(timeline, people[2], at(BERLIN, 2026, 3, 31, 10, 30), 30, "done")

    def withdraw(p: Participant, when: dt.datetime) -> None:
        p.withdrawn_at = when
        services.enrollment_withdraw(enrollment=Enrollment.objects.get(study=study, learner=p.learner), at=when)

    timeline.add(at(NEW_YORK, 2026, 3, 18, 12), withdraw, people[3], at(NEW_YORK, 2026, 3, 18, 12))

    def edit_profile() -> None:  # after enrolment: the export must keep the baseline
        coaching.profile_update(learner=people[0].learner, goal_category="art", weekly_hours=Decimal("8.0"),
                                confidence=10)
        people[5].learner.timezone = "Asia/Tokyo"
        people[5].learner.save()

    timeline.add(at(BERLIN, 2026, 3, 20, 12), edit_profile)
    # The periodic task marks unreported sessions missed every few hours.
    moment = dt.datetime(2026, 3, 2, 0, tzinfo=dt.UTC)
    while moment < dt.datetime(2026, 4, 20, tzinfo=dt.UTC):
        timeline.add(moment, services.sessions_mark_missed)
        moment += dt.timedelta(hours=6)
    return study, people, timeline


def independent_rows(study, people: list[Participant], as_of: dt.datetime) -> list[dict]:
    """The export's cells from the raw tables, by the codebook's definitions, without its SQL."""
    monday = study.start_date - dt.timedelta(days=study.start_date.weekday())
    shift = dt.timedelta(days=services.study_date_shift_days(study=study) if study.date_shift_enabled else 0)
    n_weeks = study.duration_weeks
    intended = study.intended_sessions_per_week

    def week_of(day: dt.date) -> int:
        return ((day - dt.timedelta(days=day.weekday())) - monday).days // 7 + 1

    order = {e.learner_id: e.pk for e in Enrollment.objects.filter(study=study)}
    rows = []
    for p in sorted((p for p in people if p.learner.pk in order), key=lambda p: order[p.learner.pk]):
        zone = ZoneInfo(p.tz)

        def local(moment: dt.datetime, zone=zone) -> dt.date:
            return moment.astimezone(zone).date()

        def enrolled(moment: dt.datetime, p=p) -> bool:
            return p.enrolled_at <= moment and (p.withdrawn_at is None or moment < p.withdrawn_at)

        weeks: dict[int, dict] = {}

        def cell(week: int, weeks=weeks) -> dict:
            return weeks.setdefault(week, {"planned": 0, "completed": 0, "skipped": 0, "missed": 0, "pending": 0,
                                           "pmin": 0, "cmin": 0, "checkins": 0, "days": set(), "self_report": 0,
                                           "calendar": 0, "staff": 0, "cancelled": 0, "replaced": 0, "late": 0,
                                           "other_plan": 0})

        def closes(week: int, zone=zone) -> dt.datetime:  # 72 h after the local Monday that ends the week
            return dt.datetime.combine(monday + dt.timedelta(weeks=week), dt.time(0, 0), tzinfo=zone) + CLOSE

        due_sessions = {}  # session id -> (session, the moment it is read at)
        for s in PlannedSession.objects.filter(plan__learner=p.learner).select_related("plan"):
            if not enrolled(s.planned_start):
                continue
            week = week_of(local(s.planned_start))
            c = cell(week)
            closed = closes(week) <= as_of
            read_at = closes(week) if closed else as_of
            changes = list(SessionStatusChange.objects.filter(session=s).order_by("changed_at", "pk"))
            status = next((ch.from_status for ch in changes if ch.changed_at > read_at), s.status)
            evidence = next((ch.completion_source for ch in reversed(changes)
                             if ch.to_status == "completed" and ch.changed_at <= read_at and ch.completion_source),
                            s.completion_source)
            if closed:
                c["late"] += sum(1 for ch in changes if closes(week) < ch.changed_at <= as_of)
            if status in ("cancelled", "replaced"):
                c[status] += 1
                continue
            c["other_plan"] += week_of(s.plan.week_start) != week
            if s.planned_start + dt.timedelta(minutes=s.duration_minutes) + GRACE > as_of:
                c["pending"] += 1
                continue
            due_sessions[s.pk] = (s, read_at)
            c["planned"] += 1
            c["pmin"] += s.duration_minutes
            done = status == "completed" and evidence in ("self_report", "calendar", "staff")
            c["completed" if done else status if status == "skipped" else "missed"] += 1
            if done:
                c[evidence] += 1
                c["cmin"] += s.duration_minutes
                c["days"].add(local(s.planned_start))
        reported = set()  # a session counts once in `checkins`, whatever its reports
        for checkin in CheckIn.objects.filter(learner=p.learner, created_at__lte=as_of):
            if checkin.session_id is None:
                if enrolled(checkin.created_at):
                    cell(week_of(local(checkin.created_at)))["checkins"] += 1
            elif checkin.session_id in due_sessions and checkin.session_id not in reported:
                session, read_at = due_sessions[checkin.session_id]
                if checkin.created_at <= read_at:
                    reported.add(checkin.session_id)
                    cell(week_of(local(session.planned_start)))["checkins"] += 1
        for m in Message.objects.filter(conversation__learner=p.learner, role="learner", created_at__lte=as_of):
            if enrolled(m.created_at):
                cell(week_of(local(m.created_at)))["days"].add(local(m.created_at))

        withdrawn = p.withdrawn_at is not None and p.withdrawn_at <= as_of
        first = max(1, week_of(local(p.enrolled_at)))
        withdrawn_week = max(first, week_of(local(p.withdrawn_at))) if withdrawn else None
        as_of_week = week_of(local(as_of))
        pid = "p" + hmac.new(SECRET.encode(), f"participant:{study.pk}:{p.learner.research_id}".encode(),
                             hashlib.sha256).hexdigest()[:16]
        stratum = p.baseline[0] or "unknown"
        last_active = None
        for week in range(first, min(n_weeks, withdrawn_week or n_weeks, as_of_week) + 1):
            c = cell(week)
            if c["days"]:
                last_active = week
            planned = c["planned"]
            rows.append({
                "participant_id": pid, "arm": Enrollment.objects.get(study=study, learner=p.learner).arm,
                "stratum": stratum, "cohort": study.cohort or None, "timezone": p.tz,
                "timezone_at_export": Learner.objects.get(pk=p.learner.pk).timezone, "enrolled_week": first,
                "withdrawn": withdrawn, "withdrawn_week": withdrawn_week, "study_week": week,
                "week_start": monday + dt.timedelta(weeks=week - 1) + shift,
                "week_complete": week < as_of_week and c["pending"] == 0, "week_closed": closes(week) <= as_of,
                "intended_sessions": intended,
                "protocol_adherence": round(min(c["completed"], intended) / intended, 4),
                "protocol_adherent": c["completed"] >= intended,
                "planned_sessions": planned, "completed_sessions": c["completed"],
                "completed_by_checkin": c["self_report"], "completed_by_calendar": c["calendar"],
                "completed_by_staff": c["staff"],
                "skipped_sessions": c["skipped"], "missed_sessions": c["missed"], "pending_sessions": c["pending"],
                "cancelled_sessions": c["cancelled"], "replaced_sessions": c["replaced"],
                "planned_minutes": c["pmin"], "completed_minutes": c["cmin"],
                "adherence_ratio": round(c["completed"] / planned, 4) if planned else None,
                "adherent": c["completed"] >= 0.8 * planned if planned else None,
                "late_corrections": c["late"], "sessions_other_plan_week": c["other_plan"],
                "checkins": c["checkins"], "active_days": len(c["days"]), "last_active_week": last_active,
                "goal_category": p.baseline[0], "weekly_hours": p.baseline[1], "best_time": p.baseline[2],
                "confidence": p.baseline[3], "dates_shifted": study.date_shift_enabled, "schema_version": 3,
                "exported_at": as_of.replace(microsecond=0) + shift,
            })
    return rows


# --- reading the files as a statistician would ---------------------------------------------------

def _py(value, kind: str):
    """A pandas cell as a plain Python value (None for any missing marker)."""
    if value is None or value is pd.NA or (not isinstance(value, str) and pd.isna(value)):
        return None
    if kind == "date":
        return value.date() if isinstance(value, pd.Timestamp) else value
    if kind == "datetime":
        return value.to_pydatetime()
    if kind == "integer":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "boolean":
        return bool(value)
    return str(value)


def _pandas_type_ok(series, kind: str) -> bool:
    types = pd.api.types
    if kind == "string":
        return types.is_string_dtype(series.dtype)
    if kind == "integer":
        return types.is_integer_dtype(series.dtype)
    if kind == "float":
        return types.is_float_dtype(series.dtype)
    if kind == "boolean":
        return types.is_bool_dtype(series.dtype)
    if kind == "date":  # CSV + parse_dates: datetime64 at midnight; Parquet: datetime.date objects
        return types.is_datetime64_dtype(series.dtype) or all(
            isinstance(v, dt.date) for v in series.dropna())
    if kind == "datetime":
        return isinstance(series.dtype, pd.DatetimeTZDtype) and str(series.dtype.tz) == "UTC"
    raise AssertionError(kind)


def read_all(csv_path, parquet_path) -> dict[str, list[dict]]:
    """Every reader's rows as Python values, after checking each reader's column types."""
    kinds = {c.name: c.type for c in COLUMNS}
    dates = [c.name for c in COLUMNS if c.type in ("date", "datetime")]
    out = {}
    # pyarrow: Parquet schema is the codebook's exactly; CSV inference gives the codebook's types.
    table = pq.read_table(parquet_path)
    assert table.schema == arrow_schema()
    out["pyarrow parquet"] = table.to_pylist()
    inferred = pcsv.read_csv(csv_path, convert_options=pcsv.ConvertOptions(strings_can_be_null=True))
    assert inferred.column_names == COLUMN_NAMES
    for c in COLUMNS:
        column = inferred.column(c.name)
        if column.null_count == len(column):  # nothing to infer from: only allowed where missing is
            assert c.nullable, c.name
        elif c.type == "datetime":  # CSV text has whole seconds; the unit is the reader's choice
            assert pa.types.is_timestamp(column.type) and column.type.tz == "UTC", (c.name, column.type)
        else:
            assert column.type == arrow_type(c.type), (c.name, column.type)
    typed = pcsv.read_csv(csv_path, convert_options=pcsv.ConvertOptions(
        strings_can_be_null=True, column_types={c.name: arrow_type(c.type) for c in COLUMNS}))
    out["pyarrow csv"] = typed.to_pylist()
    # pandas, as the codebook says to read it.
    frames = {
        "pandas csv": pd.read_csv(csv_path, dtype_backend="numpy_nullable", parse_dates=dates),
        "pandas parquet": pd.read_parquet(parquet_path, dtype_backend="numpy_nullable"),
    }
    for name, frame in frames.items():
        assert list(frame.columns) == COLUMN_NAMES
        for c in COLUMNS:
            if frame[c.name].isna().all():
                assert c.nullable, (name, c.name)
            else:
                assert _pandas_type_ok(frame[c.name], c.type), (name, c.name, frame[c.name].dtype)
        out[name] = [{k: _py(v, kinds[k]) for k, v in row.items()} for row in frame.to_dict("records")]
    return out


def check_missing_value_convention(csv_path) -> None:
    with open(csv_path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        for row in reader:
            for c in COLUMNS:
                cell = row[c.name]
                assert cell not in ("NA", "NaN", "nan", "null", "None", "''"), (c.name, cell)
                if cell == "":
                    assert c.nullable, c.name
                if c.type == "boolean" and cell:
                    assert cell in ("true", "false"), (c.name, cell)


def compare(expected: list[dict], readers: dict[str, list[dict]]) -> int:
    """Every cell of every reader against the independent rows; returns cells compared."""
    cells = 0
    mismatches = []
    for reader, rows in readers.items():
        assert len(rows) == len(expected), (reader, len(rows), len(expected))
        for i, (got, want) in enumerate(zip(rows, expected, strict=True)):
            for name in COLUMN_NAMES:
                cells += 1
                if got[name] != want[name] or type(got[name]) is not type(want[name]):
                    mismatches.append((reader, i, want["participant_id"], want["study_week"], name, got[name],
                                       want[name]))
    assert not mismatches, "\n".join(map(str, mismatches[:12]))
    return cells


def export_files(study, tmp_path, label: str, *extra: str) -> tuple:
    csv_path, parquet_path = tmp_path / f"{label}.csv", tmp_path / f"{label}.parquet"
    for fmt, path in (("csv", csv_path), ("parquet", parquet_path)):
        call_command("export_adherence", "--study", str(study.public_id), "--format", fmt, "--out", str(path),
                     "--validate", "--no-progress", *extra)
    return csv_path, parquet_path


def rebuild_and_check(clock, tmp_path) -> dict[str, int]:
    spring, people, timeline = build_spring(clock)
    cells = {}

    # Export 1: Tuesday 31 March, study week 5; sessions later that week are pending.
    tuesday = dt.datetime(2026, 3, 31, 10, tzinfo=dt.UTC)
    timeline.run_until(tuesday)
    csv_path, parquet_path = export_files(spring, tmp_path, "spring-tuesday")
    expected = independent_rows(spring, people, tuesday)
    check_missing_value_convention(csv_path)
    cells["spring, Tuesday"] = compare(expected, read_all(csv_path, parquet_path))
    week5 = [r for r in expected if r["study_week"] == 5]
    assert week5 and not any(r["week_complete"] for r in week5) and sum(r["pending_sessions"] for r in week5) >= 2
    # The scenario exercises what it claims: DST-night sessions, a withdrawal, a late enrolment,
    # the edited baseline, the moved learner, empty ratios, skipped and missed counts.
    person0 = [r for r in expected if r["goal_category"] == "music" and r["timezone"] == BERLIN]
    assert {(r["goal_category"], r["weekly_hours"], r["confidence"], r["stratum"]) for r in person0} == {
        ("music", 5.0, 8, "music")}
    assert LearnerProfile.objects.get(learner=people[0].learner).goal_category == "art"  # edited since
    withdrawn = [r for r in expected if r["withdrawn"]]
    assert withdrawn and {r["withdrawn_week"] for r in withdrawn} == {3} and max(
        r["study_week"] for r in withdrawn) == 3
    assert {r["enrolled_week"] for r in expected} == {1, 3}
    assert any(r["adherence_ratio"] is None for r in expected)
    assert sum(r["skipped_sessions"] for r in expected) and sum(r["missed_sessions"] for r in expected)
    assert "Asia/Tokyo" not in {r["timezone"] for r in expected}

    # A premature enrolment into a study that starts while "spring" still runs is refused. (An
    # enrolment ahead of a study starting after spring ends is allowed and takes effect at that
    # study's start: test_defensible_trial, issue 34 point 6.)
    summer = services.study_create(**INTENDED_USE, name="summer", start_date=dt.date(2026, 4, 6), duration_weeks=3,
                                   secret=SECRET)
    with pytest.raises(ApplicationError) as refused:
        services.enrollment_create(study=summer, learner=people[0].learner, enrolled_at=tuesday)
    assert refused.value.code == "enrolment_conflict"
    autumn = services.study_create(**INTENDED_USE, name="autumn", start_date=dt.date(2026, 10, 19), duration_weeks=3,
                                   secret=SECRET, date_shift_enabled=True)
    arms = {p.learner.pk: Enrollment.objects.get(study=spring, learner=p.learner).arm for p in people}
    assert all(Learner.objects.get(pk=pk).study_arm == arm for pk, arm in arms.items())

    # Export 2: after the end, every week complete.
    after = dt.datetime(2026, 4, 20, 9, tzinfo=dt.UTC)
    timeline.run_until(after)
    csv_path, parquet_path = export_files(spring, tmp_path, "spring-after")
    expected_after = independent_rows(spring, people, after)
    cells["spring, after the end"] = compare(expected_after, read_all(csv_path, parquet_path))
    assert all(r["week_complete"] for r in expected_after)

    # Study "autumn": same secret, shifted dates, no cohort, over the autumn DST changes.
    autumn_people = []
    for p in people[:6]:  # their profiles as they are now (person 0 edited, person 5 moved to Tokyo)
        learner = Learner.objects.get(pk=p.learner.pk)
        profile = LearnerProfile.objects.get(learner=learner)
        autumn_people.append(Participant(learner=learner, tz=learner.timezone, baseline=(
            profile.goal_category or None, None if profile.weekly_hours is None else float(profile.weekly_hours),
            profile.best_time or None, profile.confidence)))
    timeline = Timeline(clock)
    clock.set(dt.datetime(2026, 10, 10, tzinfo=dt.UTC))
    for p in autumn_people:
        when = at(p.tz, 2026, 10, 19, 9)
        p.enrolled_at = when
        timeline.add(when, services.enrollment_create, study=autumn, learner=p.learner, enrolled_at=when)
        # EU DST ends Sunday 25 October, US DST Sunday 1 November; 6 November is after the export.
        for month, day, hour, minute, outcome in ((10, 25, 23, 30, "late"), (10, 26, 0, 30, "done"),
                                                  (10, 28, 18, 0, "missed"), (11, 1, 23, 30, "done"),
                                                  (11, 2, 0, 30, "skipped"), (11, 6, 18, 0, "done")):
            plan(timeline, p, at(p.tz, 2026, month, day, hour, minute), 30, outcome)
    moment = dt.datetime(2026, 10, 19, tzinfo=dt.UTC)
    while moment < dt.datetime(2026, 11, 5, tzinfo=dt.UTC):
        timeline.add(moment, services.sessions_mark_missed)
        moment += dt.timedelta(hours=6)
    wednesday = dt.datetime(2026, 11, 4, 12, tzinfo=dt.UTC)  # week 3; the Friday session is pending
    timeline.run_until(wednesday)
    csv_path, parquet_path = export_files(autumn, tmp_path, "autumn")
    expected_autumn = independent_rows(autumn, autumn_people, wednesday)
    check_missing_value_convention(csv_path)
    readers = read_all(csv_path, parquet_path)
    cells["autumn (shifted)"] = compare(expected_autumn, readers)
    assert all(r["cohort"] is None for r in readers["pyarrow parquet"])  # null, not ''
    anchors = {r["week_start"] - dt.timedelta(weeks=r["study_week"] - 1) for r in expected_autumn}
    assert len(anchors) == 1 and dt.date(2026, 10, 19) not in anchors
    assert not {r["participant_id"] for r in expected_autumn} & {r["participant_id"] for r in expected_after}
    # Treatment now follows the autumn enrolment; the spring export still shows the spring arm.
    for p in autumn_people:
        assert Learner.objects.get(pk=p.learner.pk).study_arm == Enrollment.objects.get(
            study=autumn, learner=p.learner).arm
    csv_path, parquet_path = export_files(spring, tmp_path, "spring-again")
    assert read_all(csv_path, parquet_path)["pyarrow parquet"][0]["arm"] == expected_after[0]["arm"]
    return cells


def test_rebuilt_study_matches_an_independent_computation_in_every_cell(clock, tmp_path):
    cells = rebuild_and_check(clock, tmp_path)
    print("cells compared:", cells)
    assert min(cells.values()) > 1000


@pytest.mark.embedded
def test_rebuilt_study_on_the_embedded_database(clock, tmp_path):
    """The same rebuild on SQLite (the embedded default), where local dates come from the
    registered bloom_local_date function instead of AT TIME ZONE."""
    cells = rebuild_and_check(clock, tmp_path)
    assert min(cells.values()) > 1000
