"""The statistician's worked example (docs/research-export.md): the analysis functions on rows
with a known answer, and the one command that simulates, exports and prints the analysis."""

from __future__ import annotations

import io
import math
import statistics

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from coaching.research.analysis import cluster_robust_ols, welch_participant_means
from coaching.research.models import Study

pytestmark = pytest.mark.django_db


def _rows(values: dict[str, tuple[str, list[float]]]) -> list[dict]:
    return [{"participant_id": pid, "arm": arm, "protocol_adherence": str(v), "stratum": "x",
             "study_week": str(week + 1), "withdrawn": "false", "adherence_ratio": ""}
            for pid, (arm, weekly) in values.items() for week, v in enumerate(weekly)]


DATA = {"a": ("coach", [1.0, 0.5]), "b": ("coach", [1 / 3, 1 / 3, 2 / 3]), "c": ("coach", [0.0]),
        "d": ("tracker", [0.0, 1 / 3]), "e": ("tracker", [0.5, 0.5, 0.0]), "f": ("tracker", [2 / 3])}


def test_welch_on_participant_means_matches_the_textbook_formula():
    means = {pid: statistics.mean(v) for pid, (_, v) in DATA.items()}
    coach, tracker = [means[p] for p in "abc"], [means[p] for p in "def"]
    se = math.sqrt(statistics.variance(coach) / 3 + statistics.variance(tracker) / 3)
    got = welch_participant_means(_rows(DATA), treatment="coach", control="tracker")
    assert got.difference == pytest.approx(statistics.mean(coach) - statistics.mean(tracker))
    assert got.se == pytest.approx(se)
    assert (got.n_participants, got.n_rows) == (6, 12)


def test_cluster_robust_ols_arm_coefficient_is_the_row_mean_difference():
    rows = _rows(DATA)
    got = cluster_robust_ols(rows, treatment="coach", control="tracker")
    coach = [float(r["protocol_adherence"]) for r in rows if r["arm"] == "coach"]
    tracker = [float(r["protocol_adherence"]) for r in rows if r["arm"] == "tracker"]
    assert got.difference == pytest.approx(statistics.mean(coach) - statistics.mean(tracker))
    assert got.se > 0 and got.n_participants == 6


def test_one_command_simulates_exports_and_prints_the_analysis(tmp_path):
    out = io.StringIO()
    call_command("research_analysis_example", "--learners", "40", "--weeks", "4", "--out", str(tmp_path),
                 stdout=out)
    text = out.getvalue()
    assert "participant means, Welch" in text and "cluster-robust (+ stratum, week)" in text
    assert (tmp_path / "example.csv").exists() and (tmp_path / "example.csv.summary.csv").exists()
    assert "mean_protocol_adherence" in (tmp_path / "example.csv.codebook.md").read_text()
    assert not Study.objects.exists()  # the simulated study was rolled back


def test_the_command_refuses_a_study_too_small_to_analyse(tmp_path):
    with pytest.raises(CommandError):
        call_command("research_analysis_example", "--learners", "2", "--out", str(tmp_path))
