"""200 learners × 12 weeks, two arms: the exported CSV equals a plain-Python recomputation from
the raw simulated rows (zoneinfo for local weeks, no SQL), per row and as per-arm weekly means."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import hmac
import io
from collections import defaultdict
from statistics import mean
from zoneinfo import ZoneInfo

import pytest

from coaching.research import services
from coaching.research.codebook import COLUMN_NAMES
from coaching.research.export import csv_chunks, export_records
from coaching.research.simulation import simulate
from coaching.research.tests.factories import INTENDED_USE

pytestmark = pytest.mark.django_db

EXPORTED_AT = dt.datetime(2026, 7, 1, 12, 0, tzinfo=dt.UTC)
START = dt.date(2026, 3, 4)  # a Wednesday: study week 1 starts Monday 2 March
WEEKS = 12


def export_csv(study) -> list[dict[str, str]]:
    text = "".join(csv_chunks(export_records(study=study, exported_at=EXPORTED_AT)))
    return list(csv.DictReader(io.StringIO(text)))


def expected_rows(study, data) -> dict[tuple[str, int], dict]:
    """Independent computation: only the simulation's own Python rows and zoneinfo, by the
    codebook's definitions (enrolment window, due sessions, activity on the session's date)."""
    study_monday = START - dt.timedelta(days=START.weekday())
    grace = dt.timedelta(minutes=120)

    def local_day(moment: dt.datetime, tz: str) -> dt.date:
        return moment.astimezone(ZoneInfo(tz)).date()

    def week_of(moment: dt.datetime, tz: str) -> int:
        day = local_day(moment, tz)
        return ((day - dt.timedelta(days=day.weekday())) - study_monday).days // 7 + 1

    learners = {s.learner_id: s for s in data.learners}

    def enrolled(lid: int, moment: dt.datetime) -> bool:
        s = learners[lid]
        return s.enrolled_at <= moment and (s.withdrawn_at is None or moment < s.withdrawn_at)

    counts = defaultdict(lambda: defaultdict(int))
    days = defaultdict(set)
    for lid, start, minutes, status, _completed_at in data.sessions:
        if not enrolled(lid, start):
            continue
        tz = learners[lid].tz
        key = (lid, week_of(start, tz))
        if start + dt.timedelta(minutes=minutes) + grace > EXPORTED_AT:
            counts[key]["pending"] += 1
            continue
        counts[key]["planned"] += 1
        counts[key]["pmin"] += minutes
        counts[key][status if status in ("completed", "skipped") else "missed"] += 1
        if status == "completed":
            counts[key]["cmin"] += minutes
            days[key].add(local_day(start, tz))  # the session's own day, not the report's
    for lid, when, _ in data.messages:
        if enrolled(lid, when):
            days[(lid, week_of(when, learners[lid].tz))].add(local_day(when, learners[lid].tz))
    for lid, _when, session_start in data.checkins:
        if enrolled(lid, session_start):  # every simulated check-in is about a (due) session
            counts[(lid, week_of(session_start, learners[lid].tz))]["checkins"] += 1

    out = {}
    for s in data.learners:
        message = f"participant:{study.pk}:{s.research_id}".encode()
        pid = "p" + hmac.new(study.secret.encode(), message, hashlib.sha256).hexdigest()[:16]
        first = max(1, week_of(s.enrolled_at, s.tz))
        withdrawn_week = week_of(s.withdrawn_at, s.tz) if s.withdrawn_at else None
        last = min(WEEKS, withdrawn_week or WEEKS)
        last_active = None
        for week in range(first, last + 1):
            key = (s.learner_id, week)
            c = counts[key]
            p, done = c["planned"], c["completed"]
            if days[key]:
                last_active = week
            out[(pid, week)] = {
                "arm": s.arm, "stratum": s.goal_category, "timezone": s.tz, "enrolled_week": first,
                "withdrawn": withdrawn_week is not None, "withdrawn_week": withdrawn_week,
                "week_start": (study_monday + dt.timedelta(days=7 * (week - 1))).isoformat(),
                "week_complete": c["pending"] == 0,
                "planned_sessions": p, "completed_sessions": done, "skipped_sessions": c["skipped"],
                "missed_sessions": c["missed"], "pending_sessions": c["pending"],
                "planned_minutes": c["pmin"], "completed_minutes": c["cmin"],
                "adherence_ratio": None if p == 0 else done / p,
                "adherent": None if p == 0 else done / p >= 0.8,
                "checkins": c["checkins"], "active_days": len(days[key]), "last_active_week": last_active,
                "goal_category": s.goal_category, "best_time": s.best_time, "confidence": s.confidence,
                "weekly_hours": s.weekly_hours,
            }
    return out


def _na(value: str):
    return None if value == "" else value


@pytest.fixture
def simulated():
    study = services.study_create(**INTENDED_USE,
                                  name="sim", start_date=START, duration_weeks=WEEKS, cohort="2026-spring")
    data = simulate(study=study, n_learners=200, seed=20261130)
    return study, data


def test_export_matches_independent_computation(simulated):
    study, data = simulated
    rows = export_csv(study)
    expected = expected_rows(study, data)

    assert list(rows[0].keys()) == COLUMN_NAMES
    # Both arms present and roughly balanced (stratified permuted blocks of 4).
    arms = defaultdict(int)
    for s in data.learners:
        arms[s.arm] += 1
    assert set(arms) == {"coach", "tracker"} and abs(arms["coach"] - arms["tracker"]) <= 8
    # Drop-outs and NA weeks both occur, so those paths are exercised.
    assert any(s.withdrawn_at for s in data.learners)
    assert any(r["adherence_ratio"] == "" for r in rows)

    # Row-level equality.
    got = {(r["participant_id"], int(r["study_week"])): r for r in rows}
    assert len(got) == len(rows) == len(expected)
    assert got.keys() == expected.keys()
    for key, exp in expected.items():
        r = got[key]
        assert r["cohort"] == "2026-spring"
        for col in ("arm", "stratum", "timezone", "week_start"):
            assert r[col] == exp[col], (key, col)
        for col in ("enrolled_week", "planned_sessions", "completed_sessions", "skipped_sessions", "missed_sessions",
                    "pending_sessions", "planned_minutes", "completed_minutes", "checkins", "active_days",
                    "confidence"):
            assert int(r[col]) == exp[col], (key, col)
        for col in ("withdrawn", "week_complete"):
            assert r[col] == ("true" if exp[col] else "false"), (key, col)
        assert _na(r["withdrawn_week"]) == (None if exp["withdrawn_week"] is None else str(exp["withdrawn_week"]))
        ratio = _na(r["adherence_ratio"])
        assert (None if ratio is None else float(ratio)) == (
            None if exp["adherence_ratio"] is None else round(exp["adherence_ratio"], 4)), key
        adherent = _na(r["adherent"])
        assert (None if adherent is None else adherent == "true") == exp["adherent"], key
        last = _na(r["last_active_week"])
        assert (None if last is None else int(last)) == exp["last_active_week"], key
        assert (r["goal_category"], r["best_time"]) == (exp["goal_category"], exp["best_time"])
        assert float(r["weekly_hours"]) == exp["weekly_hours"]
        assert r["schema_version"] == "3" and r["exported_at"] == "2026-07-01T12:00:00Z"

    # Per-arm weekly means (what an analyst computes first).
    def weekly_means(source, ratio_of):
        buckets = defaultdict(list)
        minutes = defaultdict(list)
        for row in source:
            value = ratio_of(row)
            if value is not None:
                buckets[(row["arm"], int(row["study_week"]))].append(value)
            minutes[(row["arm"], int(row["study_week"]))].append(int(row["completed_minutes"]))
        return ({k: mean(v) for k, v in buckets.items()}, {k: mean(v) for k, v in minutes.items()})

    exp_rows = [{**v, "study_week": k[1]} for k, v in expected.items()]
    got_ratio, got_minutes = weekly_means(rows, lambda r: None if r["adherence_ratio"] == ""
                                          else float(r["adherence_ratio"]))
    exp_ratio, exp_minutes = weekly_means(exp_rows, lambda r: r["adherence_ratio"])
    assert got_ratio.keys() == exp_ratio.keys()
    assert len({arm for arm, _ in got_ratio}) == 2 and len({w for _, w in got_ratio}) == WEEKS
    for key in exp_ratio:
        # The export rounds each ratio to 4 decimals, so means agree within 5e-5.
        assert got_ratio[key] == pytest.approx(exp_ratio[key], abs=5e-5), key
        assert got_minutes[key] == pytest.approx(exp_minutes[key], abs=1e-9), key
    # The simulated effect is visible: the coach arm has higher mean adherence overall.
    coach = mean(v for (arm, _), v in exp_ratio.items() if arm == "coach")
    tracker = mean(v for (arm, _), v in exp_ratio.items() if arm == "tracker")
    assert coach > tracker


def test_pseudonymous_ids_stable_and_secret_dependent(simulated):
    study, data = simulated
    first = [r["participant_id"] for r in export_csv(study)]
    second = [r["participant_id"] for r in export_csv(study)]
    assert first == second
    assert len(set(first)) == len(data.learners)
    assert all(len(p) == 17 and p[0] == "p" and int(p[1:], 16) >= 0 for p in first)
    study.secret = "another-secret-entirely"
    third = [r["participant_id"] for r in export_csv(study)]
    assert len(third) == len(first)
    assert not set(third) & set(first)


def test_no_identifier_or_free_text_in_any_cell(simulated):
    study, data = simulated
    rows = export_csv(study)
    forbidden = set()
    for s in data.learners:
        forbidden |= {s.name, s.name.split()[0], s.research_id, s.research_id.replace("-", ""),
                      f"sim{s.learner_id}@example.org"}
    forbidden |= {text for _, _, text in data.messages}
    forbidden |= {"sourdough", "fractal", "Secret goal text", "@"}
    for row in rows:
        for column, cell in row.items():
            for needle in forbidden:
                assert needle not in cell, (column, needle)
