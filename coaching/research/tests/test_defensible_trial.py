"""The nine defects of issue 34 ("adherence a trial can defend"), one test each (some with two
or three parts), through the project's own services on a settable clock.

Study "trial": starts Monday 2 March 2026, 4 weeks, intended use 3 sessions a week."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from django.contrib import admin
from django.test import RequestFactory
from icalendar import Calendar, Event

from coaching import services as coaching
from coaching.models import CheckIn, Learner, Plan, PlannedSession
from coaching.research import services
from coaching.research.adherence import adherence_by_arm
from coaching.research.api.views import export_filename
from coaching.research.calendar import render_feed
from coaching.research.codebook import codebook_markdown
from coaching.research.export import SUMMARY_COLUMNS, export_records, pseudonymous_id
from coaching.research.models import Enrollment, EnrollmentEvent
from coaching.research.tests import factories as f
from core.errors import ApplicationError

pytestmark = pytest.mark.django_db
UTC = dt.UTC
START = dt.date(2026, 3, 2)  # a Monday
WEEK = dt.timedelta(days=7)


def at(*args: int, tz: str = "UTC") -> dt.datetime:
    return dt.datetime(*args, tzinfo=ZoneInfo(tz))


def _study(name: str = "trial", **kwargs):
    return services.study_create(name=name, start_date=START, duration_weeks=4, intended_sessions_per_week=3,
                                 intended_use="three study sessions a week, as the protocol asks", **kwargs)


def _enrolled(clock, study, *, tz: str = "UTC", when: dt.datetime | None = None, goal: str = "language"):
    clock.set(when or at(2026, 3, 1, 12))
    learner = f.learner(f.client(f"c-{Learner.objects.count()}"), tz=tz, goal_category=goal)
    services.enrollment_create(study=study, learner=learner)
    return learner


def _schedule(clock, learner, start: dt.datetime, minutes: int = 30) -> PlannedSession:
    clock.set(start - dt.timedelta(days=1))
    return coaching.session_schedule(learner=learner, start=start, duration_minutes=minutes)


def _rows(study, as_of: dt.datetime) -> list[dict]:
    return list(export_records(study=study, exported_at=as_of))


def _row(study, as_of: dt.datetime, week: int, index: int = 0) -> dict:
    rows = [r for r in _rows(study, as_of) if r["study_week"] == week]
    return rows[index]


# --- 1. the outcome cannot be raised by doing less ----------------------------------------------

def test_d1_weeks_with_nothing_planned_are_explicit_zeros_against_the_intended_use(clock):
    study = _study()
    learner = _enrolled(clock, study)
    sessions = [_schedule(clock, learner, at(2026, 3, d, 18)) for d in (2, 4, 6)]  # week 1 only
    for s in sessions:
        clock.set(s.planned_start + dt.timedelta(minutes=40))
        coaching.checkin_log(learner=learner, outcome="completed", session=s)
    after = at(2026, 3, 20, 12)  # weeks 1 and 2 over and closed
    rows = {r["study_week"]: r for r in _rows(study, after)}
    assert rows[1]["intended_sessions"] == 3 and rows[2]["intended_sessions"] == 3
    assert rows[1]["protocol_adherence"] == 1.0 and rows[1]["protocol_adherent"] is True
    # Week 2, nothing planned: an explicit 0, not a missing value left out of the means.
    assert rows[2]["planned_sessions"] == 0
    assert rows[2]["protocol_adherence"] == 0.0 and rows[2]["protocol_adherent"] is False
    assert rows[2]["adherence_ratio"] is None  # the plan-based ratio stays secondary (and undefined here)
    _, totals = adherence_by_arm(study=study, as_of=after, complete_weeks_only=True)
    arm = next(t for t in totals if t.arm == learner.enrollments.get().arm)
    assert arm.participant_weeks == 2
    assert arm.mean_protocol_adherence == pytest.approx(0.5)  # stopping planning lowers, never raises
    study.refresh_from_db()
    assert study.intended_sessions_per_week == 3 and "protocol" in study.intended_use
    assert "three study sessions a week" in codebook_markdown(study)


def test_d1_a_study_without_an_intended_use_is_refused():
    with pytest.raises(ApplicationError) as err:
        services.study_create(name="vague", start_date=START, intended_sessions_per_week=0, intended_use="")
    assert err.value.code == "invalid_intended_use"


# --- 2. a calendar event is evidence only when the learner's own calendar marks the session ------

def _ics(*events: tuple[str, dt.datetime, int]) -> bytes:
    cal = Calendar()
    cal.add("prodid", "-//Learner//their calendar//EN")
    cal.add("version", "2.0")
    for uid, start, minutes in events:
        e = Event()
        e.add("uid", uid)
        e.add("dtstart", start)
        e.add("dtend", start + dt.timedelta(minutes=minutes))
        e.add("summary", "thing")
        cal.add_component(e)
    return cal.to_ical()


def test_d2_blooms_own_feed_and_a_time_match_are_not_evidence(clock):
    study = _study()
    learner = _enrolled(clock, study)
    a = _schedule(clock, learner, at(2026, 3, 3, 7, 30))
    b = _schedule(clock, learner, at(2026, 3, 4, 7, 30))
    clock.set(at(2026, 3, 5, 12))
    feed = render_feed([a, b], now=clock.now)
    with pytest.raises(ApplicationError) as err:
        services.calendar_import(learner=learner, ics=feed)
    assert err.value.code == "bloom_feed"
    dentist = _ics(("dentist-1@elsewhere", at(2026, 3, 3, 8), 45))
    result = services.calendar_import(learner=learner, ics=dentist)
    assert result.session_ids == [] and result.unmatched == 1
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.status, b.status) == ("planned", "planned")
    # The learner's own calendar carrying the session's UID is evidence, and the row says so.
    result = services.calendar_import(learner=learner, ics=_ics((services.session_uid(a), a.planned_start, 30)))
    assert result.session_ids == [a.public_id]
    row = _row(study, at(2026, 3, 20), 1)
    assert (row["completed_sessions"], row["completed_by_calendar"], row["completed_by_checkin"]) == (1, 1, 0)


# --- 3. finished weeks do not change ---------------------------------------------------------------

def test_d3_a_late_checkin_is_a_late_correction_not_a_rewrite(clock):
    study = _study()
    learner = _enrolled(clock, study)
    sessions = [_schedule(clock, learner, at(2026, 3, d, 18)) for d in (2, 3, 4, 5)]
    for s in sessions[:3]:
        clock.set(s.planned_start + dt.timedelta(minutes=40))
        coaching.checkin_log(learner=learner, outcome="completed", session=s)
    clock.set(at(2026, 3, 6, 12))
    services.sessions_mark_missed()
    closed = at(2026, 3, 13, 12)  # week 1 ended 9 March 00:00 and closed 72 h later
    before = _row(study, closed, 1)
    assert (before["completed_sessions"], before["adherence_ratio"], before["adherent"]) == (3, 0.75, False)
    assert before["week_closed"] is True and before["late_corrections"] == 0
    clock.set(closed)
    coaching.checkin_log(learner=learner, outcome="completed", session=sessions[3])  # kept, but late
    after = _row(study, at(2026, 3, 14, 12), 1)
    assert (after["completed_sessions"], after["adherence_ratio"], after["adherent"]) == (3, 0.75, False)
    assert after["checkins"] == 3 and after["late_corrections"] == 1


def test_d3_an_overdue_session_cannot_be_moved_out_of_its_week(clock):
    study = _study()
    learner = _enrolled(clock, study)
    s = _schedule(clock, learner, at(2026, 3, 2, 8))
    clock.set(at(2026, 3, 2, 12))  # due (08:00 + 30 min + 120 min grace), not yet swept
    with pytest.raises(ApplicationError) as err:
        coaching.session_move(session=s, start=at(2026, 3, 9, 8), reason="learner asked")
    assert err.value.code == "session_due"
    with pytest.raises(ApplicationError):
        coaching.session_reschedule(session=s, start=at(2026, 3, 9, 8))
    row = _row(study, at(2026, 3, 13), 1)
    assert (row["planned_sessions"], row["missed_sessions"]) == (1, 1)


def test_d3_sessions_are_cancelled_with_a_reason_never_deleted(clock):
    study = _study()
    learner = _enrolled(clock, study)
    s = _schedule(clock, learner, at(2026, 3, 4, 18))
    request = RequestFactory().get("/")
    request.user = type("U", (), {"is_active": True, "is_staff": True, "has_perm": lambda *a: True})()
    plan_admin = admin.site._registry[Plan]
    inline = plan_admin.get_inline_instances(request, s.plan)[0]
    assert inline.has_delete_permission(request, s.plan) is False
    assert plan_admin.has_delete_permission(request, s.plan) is False
    clock.set(at(2026, 3, 3, 9))
    coaching.session_cancel(session=s, reason="learner is travelling")
    s.refresh_from_db()
    assert s.status == "cancelled"
    assert s.status_changes.get().detail == "learner is travelling"
    with pytest.raises(ApplicationError):
        coaching.session_cancel(session=s, reason="")
    row = _row(study, at(2026, 3, 13), 1)
    assert (row["planned_sessions"], row["cancelled_sessions"]) == (0, 1)
    # Taking back a just-scheduled session (the chat's undo) cancels it too: the row stays.
    t = _schedule(clock, learner, at(2026, 3, 5, 18))
    assert coaching.session_unschedule(learner=learner, session_id=t.pk) is True
    assert PlannedSession.objects.get(pk=t.pk).status == "cancelled"


# --- 4. moves replace ------------------------------------------------------------------------------

def test_d4_a_makeup_option_replaces_the_sessions_it_names(clock):
    study = _study()
    learner = _enrolled(clock, study)
    mon, wed, fri = (_schedule(clock, learner, at(2026, 3, d, 8)) for d in (2, 4, 6))
    clock.set(at(2026, 3, 2, 12))
    services.sessions_mark_missed()
    mon.refresh_from_db()
    assert mon.status == "missed"
    clock.set(at(2026, 3, 2, 20))
    option = coaching.reschedule_options(learner=learner, profile=learner.profile, missed=[mon])[0]
    made = coaching.session_makeup_apply(learner=learner, option=option, reason="make-up for Monday")
    assert len(made) == 1
    for s in (made[0], wed, fri):
        clock.set(s.planned_start + dt.timedelta(minutes=40))
        coaching.checkin_log(learner=learner, outcome="completed", session=PlannedSession.objects.get(pk=s.pk))
    row = _row(study, at(2026, 3, 13), 1)
    assert (row["planned_sessions"], row["completed_sessions"], row["replaced_sessions"]) == (3, 3, 1)
    assert row["adherence_ratio"] == 1.0


def test_d4_moving_a_named_session_moves_it(clock):
    study = _study()
    learner = _enrolled(clock, study)
    thu = _schedule(clock, learner, at(2026, 3, 5, 18))
    clock.set(at(2026, 3, 3, 9))
    moved = coaching.session_move(session=thu, start=at(2026, 3, 7, 10), reason="move my Thursday to Saturday")
    assert moved.pk == thu.pk and PlannedSession.objects.filter(plan__learner=learner).count() == 1
    change = moved.status_changes.get()
    assert (change.from_start, change.to_start) == (at(2026, 3, 5, 18), at(2026, 3, 7, 10))
    # Undoable: moving it back is the same one write.
    back = coaching.session_move(session=moved, start=change.from_start, reason="undo")
    assert back.planned_start == at(2026, 3, 5, 18)


def test_d4_a_makeup_moves_a_planned_session_it_replaces(clock):
    study = _study()
    learner = _enrolled(clock, study)
    thu = _schedule(clock, learner, at(2026, 3, 5, 18))
    clock.set(at(2026, 3, 3, 9))
    option = {"label": "A", "kind": "reschedule", "replaces": [thu.pk],
              "sessions": [{"start": at(2026, 3, 7, 10).isoformat(), "minutes": 45, "topic": "x"}]}
    made = coaching.session_makeup_apply(learner=learner, option=option, reason="learner asked")
    assert [s.pk for s in made] == [thu.pk]
    assert PlannedSession.objects.filter(plan__learner=learner).count() == 1
    thu.refresh_from_db()
    assert (thu.planned_start, thu.duration_minutes) == (at(2026, 3, 7, 10), 45)


# --- 5. no double counting -------------------------------------------------------------------------

def test_d5_one_session_counts_once_whatever_its_checkins(clock):
    study = _study()
    learner = _enrolled(clock, study)
    a = _schedule(clock, learner, at(2026, 3, 2, 18))
    b = _schedule(clock, learner, at(2026, 3, 3, 18))
    clock.set(at(2026, 3, 2, 19))
    coaching.checkin_log(learner=learner, outcome="completed", session=a)
    coaching.checkin_log(learner=learner, outcome="completed", session=PlannedSession.objects.get(pk=a.pk))
    clock.set(at(2026, 3, 3, 19))
    coaching.checkin_log(learner=learner, outcome="completed", session=b)
    coaching.checkin_log(learner=learner, outcome="skipped", session=PlannedSession.objects.get(pk=b.pk))
    row = _row(study, at(2026, 3, 13), 1)
    assert (row["completed_sessions"], row["skipped_sessions"], row["checkins"]) == (1, 1, 2)
    assert CheckIn.objects.filter(session=a).count() == 1  # the repeat "done" is the same report


# --- 6. the arm is the enrolment's -----------------------------------------------------------------

def test_d6_an_enrolment_ahead_of_time_changes_the_arm_only_at_the_study_start(clock):
    first = _study("first")
    learner = _enrolled(clock, first)  # on Sunday 1 March, the day before the study starts
    first_arm = learner.enrollments.get().arm
    clock.set(at(2026, 3, 2, 0, 30))
    services.enrollment_arms_apply()
    assert Learner.objects.get(pk=learner.pk).study_arm == first_arm
    secret = next(s for s in (f"s{i}" for i in range(64))
                  if services.arm_for_slot(study=type("S", (), {"arms": ["coach", "tracker"], "secret": s})(),
                                           stratum="language", index=0) != first_arm)
    second = services.study_create(name="second", start_date=START + 6 * WEEK, duration_weeks=4, secret=secret,
                                   intended_sessions_per_week=2, intended_use="two sessions a week")
    clock.set(at(2026, 3, 10, 12))
    ahead = services.enrollment_create(study=second, learner=learner)
    assert ahead.arm != first_arm
    learner.refresh_from_db()
    assert learner.study_arm == first_arm  # still in the first study
    learner.save()
    assert Learner.objects.get(pk=learner.pk).study_arm == first_arm
    clock.set(at(2026, 4, 13, 0, 30))  # the second study has started
    assert services.enrollment_arms_apply() == 1
    assert services.enrollment_arms_apply() == 0  # idempotent
    assert Learner.objects.get(pk=learner.pk).study_arm == ahead.arm
    kinds = list(EnrollmentEvent.objects.filter(enrollment=ahead).values_list("kind", flat=True))
    assert kinds == ["enrolled", "arm_applied"]
    assert learner.enrollments.get(study=first).events.filter(kind="arm_applied").count() == 1


def test_d6_admin_cannot_edit_enrolment_state_and_reenrolment_is_refused(clock):
    study = _study()
    learner = _enrolled(clock, study)
    enrollment = learner.enrollments.get()
    request = RequestFactory().get("/")
    enrollment_admin = admin.site._registry[Enrollment]
    readonly = set(enrollment_admin.get_readonly_fields(request, enrollment))
    assert {"withdrawn_at", "enrolled_at", "arm", "study", "learner"} <= readonly
    clock.set(at(2026, 3, 4, 12))
    services.enrollment_withdraw(enrollment=enrollment)
    with pytest.raises(ApplicationError) as err:
        services.enrollment_create(study=study, learner=learner)
    assert err.value.code == "re_enrolment_refused"
    assert [e.kind for e in EnrollmentEvent.objects.filter(enrollment=enrollment)] == ["enrolled", "withdrawn"]


# --- 7. intention to treat -------------------------------------------------------------------------

def test_d7_every_randomised_participant_has_rows_even_after_erasure(clock):
    from bloom.erasure import learner_erase

    study = _study()
    early = _enrolled(clock, study, when=at(2026, 2, 20, 12))
    clock.set(at(2026, 2, 25, 12))
    services.enrollment_withdraw(enrollment=early.enrollments.get())  # before week 1
    gone = _enrolled(clock, study, when=at(2026, 2, 26, 12))
    stays = _enrolled(clock, study, when=at(2026, 2, 27, 12))
    gone_id = pseudonymous_id(study=study, research_id=gone.research_id)
    clock.set(at(2026, 3, 10, 12))
    ids_before = sorted({r["participant_id"] for r in _rows(study, clock.now)})
    assert len(ids_before) == 3
    learner_erase(learner=gone)
    assert Enrollment.objects.filter(study=study).count() == 3
    rows = _rows(study, at(2026, 3, 20, 12))
    assert sorted({r["participant_id"] for r in rows}) == ids_before
    early_rows = [r for r in rows if r["withdrawn"] and r["withdrawn_week"] == 1]
    assert {r["study_week"] for r in early_rows} >= {1}
    assert gone_id in ids_before
    # The next enrolment in the stratum takes a fresh slot (no IntegrityError).
    newcomer = _enrolled(clock, study, when=at(2026, 3, 11, 12))
    assert newcomer.enrollments.get().stratum_index == 3
    assert stays.enrollments.get().stratum_index == 2


# --- 8. the file name carries the study's time ------------------------------------------------------

def test_d8_the_export_file_name_is_stamped_with_the_shifted_time():
    study = _study(date_shift_enabled=True)
    real = dt.datetime(2026, 5, 20, 12, tzinfo=UTC)
    shifted = real + dt.timedelta(days=services.study_date_shift_days(study=study))
    name = export_filename(study, real, "csv")
    assert f"{shifted:%Y%m%dT%H%M%SZ}" in name and f"{real:%Y%m%d}" not in name


# --- 9. a time-zone move is visible; the summary file is in the codebook -----------------------------

def test_d9_a_timezone_move_shows_in_the_file(clock):
    study = _study()
    learner = _enrolled(clock, study, tz="Europe/Berlin")
    clock.set(at(2026, 3, 3, 12))
    learner.timezone = "America/Sao_Paulo"
    learner.save(update_fields=["timezone"])
    # Sunday 8 March 20:00 in São Paulo: plan week 1 there, Monday 00:00 in Berlin (study week 2).
    s = _schedule(clock, learner, at(2026, 3, 8, 20, tz="America/Sao_Paulo"))
    assert s.plan.week_start == dt.date(2026, 3, 2)
    rows = {r["study_week"]: r for r in _rows(study, at(2026, 3, 20, 12))}
    assert rows[2]["planned_sessions"] == 1 and rows[2]["sessions_other_plan_week"] == 1
    assert rows[1]["sessions_other_plan_week"] == 0
    assert rows[1]["timezone"] == "Europe/Berlin" and rows[1]["timezone_at_export"] == "America/Sao_Paulo"


def test_d9_every_summary_column_is_in_the_codebook():
    book = codebook_markdown(None)
    for name in SUMMARY_COLUMNS:
        assert f"| `{name}` |" in book, name


def test_d4_a_makeup_is_undone_as_one(clock):
    """The chat's undo of the turn that applied a make-up: the replaced session is missed again,
    the make-up cancelled, a moved session back where it was."""
    study = _study()
    learner = _enrolled(clock, study)
    mon, wed = _schedule(clock, learner, at(2026, 3, 2, 8)), _schedule(clock, learner, at(2026, 3, 4, 8))
    clock.set(at(2026, 3, 2, 12))
    services.sessions_mark_missed()
    option = {"label": "A", "kind": "reschedule", "replaces": [mon.pk, wed.pk],
              "sessions": [{"start": at(2026, 3, 3, 18).isoformat(), "minutes": 30, "topic": ""},
                           {"start": at(2026, 3, 5, 18).isoformat(), "minutes": 30, "topic": ""}]}
    made = coaching.session_makeup_apply(learner=learner, option=option, reason="make-up")
    assert made[1].pk == wed.pk and made[0].pk != mon.pk
    assert coaching.session_makeup_undo(learner=learner, session_ids=[s.pk for s in made], reason="undo") == 2
    mon.refresh_from_db()
    wed.refresh_from_db()
    assert (mon.status, mon.replaced_by_id) == ("missed", None)
    assert (wed.status, wed.planned_start) == ("planned", at(2026, 3, 4, 8))
    assert PlannedSession.objects.get(pk=made[0].pk).status == "cancelled"
    row = _row(study, at(2026, 3, 13), 1)
    assert (row["planned_sessions"], row["missed_sessions"], row["cancelled_sessions"]) == (2, 2, 1)


# --- bad input: a clear error, nothing lost ----------------------------------------------------------

def test_moves_cancels_and_makeups_refuse_bad_input_and_change_nothing(clock):
    study = _study()
    learner = _enrolled(clock, study)
    other = _enrolled(clock, study)
    s = _schedule(clock, learner, at(2026, 3, 5, 18))
    theirs = _schedule(clock, other, at(2026, 3, 6, 18))
    clock.set(at(2026, 3, 3, 9))
    with pytest.raises(ApplicationError) as err:
        coaching.session_move(session=s, start=at(2026, 3, 7, 10), reason="  ")
    assert err.value.code == "reason_required"
    with pytest.raises(ApplicationError) as err:
        coaching.session_move(session=s, start=at(2026, 3, 1, 10), reason="into the past")
    with pytest.raises(ApplicationError) as err:
        coaching.session_makeup_apply(learner=learner, option={"replaces": [theirs.pk], "sessions": [
            {"start": at(2026, 3, 7, 10).isoformat(), "minutes": 30}]}, reason="not mine")
    assert err.value.code == "not_found"
    with pytest.raises(ApplicationError) as err:
        coaching.session_makeup_apply(learner=learner, option={"replaces": [s.pk], "sessions": [{"when": "x"}]},
                                      reason="garbled")
    assert err.value.code == "invalid_option"
    s.refresh_from_db()
    theirs.refresh_from_db()
    assert (s.status, s.planned_start, theirs.planned_start) == ("planned", at(2026, 3, 5, 18), at(2026, 3, 6, 18))
    assert not s.status_changes.exists() and PlannedSession.objects.count() == 2


def test_a_checkin_on_a_cancelled_session_is_refused_and_logs_nothing(clock):
    study = _study()
    learner = _enrolled(clock, study)
    s = _schedule(clock, learner, at(2026, 3, 5, 18))
    clock.set(at(2026, 3, 3, 9))
    coaching.session_cancel(session=s, reason="travelling")
    clock.set(at(2026, 3, 5, 19))
    with pytest.raises(ApplicationError) as err:
        coaching.checkin_log(learner=learner, outcome="completed", session=PlannedSession.objects.get(pk=s.pk))
    assert err.value.code == "session_withdrawn" and err.value.status == 409
    assert not CheckIn.objects.exists() and PlannedSession.objects.get(pk=s.pk).status == "cancelled"


def test_d7_a_learner_deleted_any_other_way_also_leaves_the_stub(clock):
    """Not only the erasure API: a learner deleted in the admin (or by any ORM delete) keeps their
    enrolment as a withdrawn, audited stub."""
    study = _study()
    learner = _enrolled(clock, study)
    research_id = learner.research_id
    clock.set(at(2026, 3, 10, 12))
    Learner.objects.get(pk=learner.pk).delete()
    stub = Enrollment.objects.get(study=study)
    assert (stub.learner_id, stub.research_id, stub.withdrawn_at) == (None, research_id, at(2026, 3, 10, 12))
    # Enrolled the day before the study started, so no arm was applied before the deletion.
    assert [e.kind for e in stub.events.all()] == ["enrolled", "withdrawn", "learner_erased"]
    rows = _rows(study, at(2026, 3, 20))
    assert [r["study_week"] for r in rows] == [1, 2] and rows[-1]["withdrawn_week"] == 2
    assert rows[0]["timezone_at_export"] is None
