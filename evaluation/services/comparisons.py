"""Comparing two runs of the same set: their summaries restricted to the transcripts both replayed,
the verdict computed in code (`evaluation.compare`), stored as a Comparison."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from evaluation import compare
from evaluation.models import Comparison, EvalRun
from evaluation.services.summaries import restricted_summary, run_summarize


def _comparable(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary as compare_summaries sees it: final-reply check rates plus raw-output check rates
    (prefixed `raw:`) so a guard that hides a worse model does not hide the regression."""
    out = dict(summary)
    rates = dict(summary.get("check_rates", {}))
    for name, value in (summary.get("raw_check_rates") or {}).items():
        rates[f"raw:{name}"] = value
    rates["guard_fired"] = summary.get("guard_fired_rate", 0.0)
    rates["fallback"] = summary.get("fallback_rate", 0.0)
    out["check_rates"] = rates
    return out


@transaction.atomic
def comparison_create(*, baseline: EvalRun, candidate: EvalRun, thresholds: compare.Thresholds | None = None,
                      pairwise_run: EvalRun | None = None,
                      judge_calibration: dict[str, dict[str, Any]] | None = None) -> Comparison:
    """`judge_calibration`: the judge's per-dimension agreement (`judge_calibrate(...)["agreement"]`).
    Without one that reaches the thresholds, judge scores are reported but cannot decide."""
    if baseline.eval_set_id != candidate.eval_set_id:
        raise ValueError("runs must use the same eval set to be compared")
    b = _comparable(baseline.summary or run_summarize(run=baseline))
    c = _comparable(candidate.summary or run_summarize(run=candidate))
    # Compare like with like: only transcripts both runs replayed (a --limit run vs a full run).
    common = set(b.get("per_transcript_checks", {})) & set(c.get("per_transcript_checks", {}))
    if common and (len(common) < len(b.get("per_transcript_checks", {})) or
                   len(common) < len(c.get("per_transcript_checks", {}))):
        b = _comparable(restricted_summary(baseline, common))
        c = _comparable(restricted_summary(candidate, common))
    pairwise = (pairwise_run.summary or {}).get("pairwise") if pairwise_run else None
    result = compare.compare_summaries(b, c, thresholds=thresholds, pairwise=pairwise,
                                       judge_calibration=judge_calibration)
    return Comparison.objects.create(baseline=baseline, candidate=candidate, deltas=result.deltas,
                                     verdict=result.verdict, reasons=result.reasons, thresholds=result.thresholds,
                                     pairwise_run=pairwise_run)
