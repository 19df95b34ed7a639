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
from coaching.research.export import COLUMN_NAMES, csv_chunks, export_records
from coaching.research.simulation import simulate

pytestmark = pytest.mark.django_db

EXPORTED_AT = dt.datetime(2026, 7, 1, 12, 0, tzinfo=dt.UTC)
START = dt.date(2026, 3, 4)  # a Wednesday: study week 1 starts Monday 2 March
WEEKS = 12


def export_csv(study) -> list[dict[str, str]]:
    text = "".join(csv_chunks(export_records(study=study, exported_at=EXPORTED_AT)))
    return list(csv.DictReader(io.StringIO(text)))


def expected_rows(study, data) -> dict[tuple[str, int], dict]:
    """Independent computation: only the simulation's own Python rows and zoneinfo."""
    study_monday = START - dt.timedelta(days=START.weekday())

    def week_of(moment: dt.datetime, tz: str) -> int:
        local_day = moment.astimezone(ZoneInfo(tz)).date()
        return ((local_day - dt.timedelta(days=local_day.weekday())) - study_monday).days // 7 + 1

    learners = {s.learner_id: s for s in data.learners}
    planned = defaultdict(int)
    completed = defaultdict(int)
    planned_min = defaultdict(int)
    completed_min = defaultdict(int)
    days = defaultdict(set)
    checkins = defaultdict(int)
    for lid, start, minutes, status, completed_at in data.sessions:
        key = (lid, week_of(start, learners[lid].tz))
        planned[key] += 1
        planned_min[key] += minutes
        if status == "completed":
            completed[key] += 1
            completed_min[key] += minutes
            local = completed_at.astimezone(ZoneInfo(learners[lid].tz)).date()
            days[(lid, week_of(completed_at, learners[lid].tz))].add(local)
    for lid, when, _ in data.messages:
        days[(lid, week_of(when, learners[lid].tz))].add(when.astimezone(ZoneInfo(learners[lid].tz)).date())
    for lid, when in data.checkins:
        checkins[(lid, week_of(when, learners[lid].tz))] += 1

    out = {}
    for s in data.learners:
        pid = hmac.new(study.secret.encode(), s.research_id.encode(), hashlib.sha256).hexdigest()[:16]
        first = max(1, week_of(s.enrolled_at, s.tz))
        last = min(WEEKS, week_of(s.withdrawn_at, s.tz)) if s.withdrawn_at else WEEKS
        last_active = None
        for week in range(first, last + 1):
            key = (s.learner_id, week)
            p, c = planned[key], completed[key]
            if days[key]:
                last_active = week
            out[(pid, week)] = {
                "arm": s.arm,
                "week_start": (study_monday + dt.timedelta(days=7 * (week - 1))).isoformat(),
                "planned_sessions": p, "completed_sessions": c,
                "planned_minutes": planned_min[key], "completed_minutes": completed_min[key],
                "adherence_ratio": None if p == 0 else c / p,
                "adherent": None if p == 0 else int(c / p >= 0.8),
                "checkins": checkins[key], "active_days": len(days[key]), "last_active_week": last_active,
                "goal_category": s.goal_category, "best_time": s.best_time, "confidence": s.confidence,
                "weekly_hours": s.weekly_hours,
            }
    return out


def _na(value: str):
    return None if value == "NA" else value


@pytest.fixture
def simulated():
    study = services.study_create(name="sim", start_date=START, duration_weeks=WEEKS, cohort="2026-spring")
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
    assert any(r["adherence_ratio"] == "NA" for r in rows)

    # Row-level equality.
    got = {(r["participant_id"], int(r["study_week"])): r for r in rows}
    assert len(got) == len(rows) == len(expected)
    assert got.keys() == expected.keys()
    for key, exp in expected.items():
        r = got[key]
        assert r["arm"] == exp["arm"]
        assert r["cohort"] == "2026-spring"
        assert r["week_start"] == exp["week_start"]
        for col in ("planned_sessions", "completed_sessions", "planned_minutes", "completed_minutes",
                    "checkins", "active_days", "confidence"):
            assert int(r[col]) == exp[col], (key, col)
        ratio = _na(r["adherence_ratio"])
        assert (None if ratio is None else float(ratio)) == (
            None if exp["adherence_ratio"] is None else round(exp["adherence_ratio"], 4)), key
        adherent = _na(r["adherent"])
        assert (None if adherent is None else int(adherent)) == exp["adherent"], key
        last = _na(r["last_active_week"])
        assert (None if last is None else int(last)) == exp["last_active_week"], key
        assert (r["goal_category"], r["best_time"]) == (exp["goal_category"], exp["best_time"])
        assert float(r["weekly_hours"]) == exp["weekly_hours"]
        assert r["schema_version"] and r["exported_at"] == "2026-07-01T12:00:00+00:00"

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
    got_ratio, got_minutes = weekly_means(rows, lambda r: None if r["adherence_ratio"] == "NA"
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
    assert all(len(p) == 16 and int(p, 16) >= 0 for p in first)
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
