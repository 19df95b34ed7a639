"""The analysis docs/research-export.md describes, on an export file as a statistician receives
it: the estimand is the difference between arms in mean weekly protocol adherence (the primary
outcome), intention to treat (every randomised participant, every participant-week the file
has). numpy only (no statsmodels in the project): two estimates, side by side.

1. Participant means, Welch. Each participant's mean protocol_adherence over their weeks, then
   the difference of the arm means of those, with Welch's standard error (unequal variances).
   Every participant weighs the same, whatever their number of weeks.
2. Row-level OLS with cluster-robust (CR1) standard errors by participant: protocol_adherence on
   the arm, unadjusted and adjusted for the randomisation stratum and the study week. Every
   participant-week weighs the same; the clustering accounts for weeks of one participant being
   alike (what a random intercept does in a mixed model).

Confidence intervals and p-values use the normal approximation (no t tables in numpy); with the
30 or more participants per arm a trial has, the difference from Student's t is in the third
decimal of the interval."""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    label: str
    difference: float
    se: float
    n_participants: int
    n_rows: int

    @property
    def ci(self) -> tuple[float, float]:
        return self.difference - Z_95 * self.se, self.difference + Z_95 * self.se

    @property
    def p_value(self) -> float:
        return math.erfc(abs(self.difference / self.se) / math.sqrt(2)) if self.se > 0 else float("nan")


@dataclass(frozen=True)
class ArmSummary:
    arm: str
    participants: int
    withdrawn: int
    participant_weeks: int
    mean_of_participant_means: float
    sd_of_participant_means: float
    mean_secondary_ratio: float | None  # plan-based adherence_ratio over weeks with a plan


def read_export_csv(path: str | Path) -> list[dict]:
    with Path(path).open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _participant_means(rows: list[dict], outcome: str) -> dict[str, tuple[str, float]]:
    values: dict[str, list[float]] = defaultdict(list)
    arm_of: dict[str, str] = {}
    for r in rows:
        values[r["participant_id"]].append(float(r[outcome]))
        arm_of[r["participant_id"]] = r["arm"]
    return {pid: (arm_of[pid], float(np.mean(v))) for pid, v in values.items()}


def arm_summaries(rows: list[dict], *, outcome: str = "protocol_adherence") -> list[ArmSummary]:
    means = _participant_means(rows, outcome)
    out = []
    for arm in sorted({a for a, _ in means.values()}):
        arm_rows = [r for r in rows if r["arm"] == arm]
        m = np.array([v for a, v in means.values() if a == arm])
        ratios = [float(r["adherence_ratio"]) for r in arm_rows if r["adherence_ratio"] != ""]
        out.append(ArmSummary(
            arm=arm, participants=len(m), participant_weeks=len(arm_rows),
            withdrawn=len({r["participant_id"] for r in arm_rows if r["withdrawn"] == "true"}),
            mean_of_participant_means=float(m.mean()), sd_of_participant_means=float(m.std(ddof=1)) if len(m) > 1
            else float("nan"), mean_secondary_ratio=float(np.mean(ratios)) if ratios else None))
    return out


def welch_participant_means(rows: list[dict], *, treatment: str, control: str,
                            outcome: str = "protocol_adherence") -> Estimate:
    means = _participant_means(rows, outcome)
    a = np.array([v for arm, v in means.values() if arm == treatment])
    b = np.array([v for arm, v in means.values() if arm == control])
    if len(a) < 2 or len(b) < 2:
        raise ValueError("each arm needs at least two participants")
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return Estimate(label="participant means, Welch", difference=float(a.mean() - b.mean()), se=se,
                    n_participants=len(a) + len(b), n_rows=sum(1 for r in rows if r["arm"] in (treatment, control)))


def cluster_robust_ols(rows: list[dict], *, treatment: str, control: str, outcome: str = "protocol_adherence",
                       adjust: bool = False) -> Estimate:
    """OLS of the outcome on an intercept and the arm (and, when `adjust`, stratum and study week
    indicators), CR1 standard error of the arm coefficient clustered by participant."""
    rows = [r for r in rows if r["arm"] in (treatment, control)]
    y = np.array([float(r[outcome]) for r in rows])
    columns = [np.ones(len(rows)), np.array([1.0 if r["arm"] == treatment else 0.0 for r in rows])]
    if adjust:
        for name in ("stratum", "study_week"):
            levels = sorted({r[name] for r in rows})
            for level in levels[1:]:  # the first level is the reference
                columns.append(np.array([1.0 if r[name] == level else 0.0 for r in rows]))
    x = np.column_stack(columns)
    xtx_inv = np.linalg.pinv(x.T @ x)
    beta = xtx_inv @ x.T @ y
    residual = y - x @ beta
    clusters: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        clusters[r["participant_id"]].append(i)
    meat = np.zeros((x.shape[1], x.shape[1]))
    for index in clusters.values():
        score = x[index].T @ residual[index]
        meat += np.outer(score, score)
    n, k, g = len(rows), x.shape[1], len(clusters)
    vcov = xtx_inv @ meat @ xtx_inv * (g / (g - 1)) * ((n - 1) / (n - k))
    label = "rows, OLS, cluster-robust" + (" (+ stratum, week)" if adjust else "")
    return Estimate(label=label, difference=float(beta[1]), se=float(math.sqrt(vcov[1, 1])), n_participants=g,
                    n_rows=n)


def analysis_report(rows: list[dict], *, treatment: str = "coach", control: str = "tracker",
                    truth: dict[str, float] | None = None) -> str:
    """The printed analysis: per-arm summary, then the estimates of the arm difference."""
    lines = ["Primary outcome: protocol_adherence (completed sessions with evidence against the intended use, "
             "every participant-week)", "",
             f"{'arm':<10}{'participants':>13}{'withdrawn':>10}{'part.-weeks':>12}{'mean (SD) of part. means':>27}"
             f"{'secondary ratio':>17}"]
    for s in arm_summaries(rows):
        secondary = "" if s.mean_secondary_ratio is None else f"{s.mean_secondary_ratio:.3f}"
        lines.append(f"{s.arm:<10}{s.participants:>13}{s.withdrawn:>10}{s.participant_weeks:>12}"
                     f"{s.mean_of_participant_means:>17.3f} ({s.sd_of_participant_means:.3f})"
                     f"{secondary:>17}")
    lines += ["", f"Estimand: mean weekly protocol adherence, {treatment} - {control}, intention to treat", "",
              f"{'method':<44}{'difference':>11}{'SE':>8}{'95% CI':>19}{'p':>9}{'participants':>14}{'rows':>7}"]
    for estimate in (welch_participant_means(rows, treatment=treatment, control=control),
                     cluster_robust_ols(rows, treatment=treatment, control=control),
                     cluster_robust_ols(rows, treatment=treatment, control=control, adjust=True)):
        low, high = estimate.ci
        lines.append(f"{estimate.label:<44}{estimate.difference:>11.4f}{estimate.se:>8.4f}"
                     f"{f'[{low:.4f}, {high:.4f}]':>19}{estimate.p_value:>9.2g}{estimate.n_participants:>14}"
                     f"{estimate.n_rows:>7}")
    if truth is not None:
        lines += ["", "The simulation's generating values (exact, before the export leaves out week-1 sessions before "
                  "enrolment and withdrawal-week sessions after the withdrawal): "
                  + ", ".join(f"{arm} {value:.4f}" for arm, value in truth.items())
                  + f"; difference {truth[treatment] - truth[control]:.4f}"]
    return "\n".join(lines) + "\n"
