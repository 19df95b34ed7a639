"""Reads for evaluation: run export (JSON), the report table the admin page renders, and the stored
judge calibration a comparison may rely on."""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from uuid import UUID

from evaluation.checks import CHECK_LABELS, CHECK_NAMES
from evaluation.models import Comparison, EvalRun, JudgeScore, Rubric

# `config["kind"]` of a stored judge calibration run: what tells it apart from replay runs.
CALIBRATION_KIND = "judge calibration"


def run_get(*, public_id: UUID) -> EvalRun:
    return EvalRun.objects.select_related("eval_set", "rubric").get(public_id=public_id)


def run_find(ref: str) -> EvalRun | None:
    """A run named on the command line: its id (UUID, what the API, the admin and the commands
    show) or its admin row number; None when there is no such run."""
    try:
        return EvalRun.objects.filter(public_id=UUID(ref)).first()
    except ValueError:
        return EvalRun.objects.filter(pk=int(ref)).first() if ref.isdigit() else None


def run_export(*, run: EvalRun) -> dict[str, Any]:
    """Everything about a run as plain JSON: config, summary, every reply with its checks and scores."""
    scores: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for s in JudgeScore.objects.filter(reply__run=run).order_by("reply_id", "dimension", "order", "repeat_index"):
        scores[s.reply_id].append({"dimension": s.dimension, "repeat": s.repeat_index, "order": s.order,
                                   "score": s.score, "invalid": s.invalid, "reason": s.reason,
                                   "attempts": s.attempts})
    replies = []
    for r in run.replies.select_related("transcript").order_by("transcript__position", "turn_index"):
        replies.append({"transcript": r.transcript.slug, "tags": r.transcript.tags, "turn": r.turn_index,
                        "learner": r.learner_text, "reply": r.reply_text, "specialist": r.specialist,
                        "routing": r.routing_reason, "tool_calls": r.tool_calls, "engine": r.engine,
                        "outcome": r.outcome, "guard_events": r.guard_events, "raw_texts": r.raw_texts,
                        "checks": r.checks, "raw_checks": r.raw_checks, "trace_id": r.trace_id,
                        "model_calls": r.model_calls, "latency_s": r.latency_s, "error": r.error,
                        "scores": scores.get(r.pk, [])})
    # Runs by their public id; a comparison has no route of its own, so it carries none.
    comparisons = [{"baseline": c.baseline.public_id, "candidate": run.public_id, "verdict": c.verdict,
                    "reasons": c.reasons, "thresholds": c.thresholds}
                   for c in Comparison.objects.filter(candidate=run).select_related("baseline")]
    return {"run": {"id": run.public_id, "label": run.label, "mode": run.mode, "set": str(run.eval_set),
                    "rubric": run.rubric.version if run.rubric else None, "config": run.config,
                    "status": run.status, "started_at": run.started_at, "finished_at": run.finished_at,
                    "wall_time_s": run.wall_time_s, "replay_time_s": run.replay_time_s,
                    "judge_time_s": run.judge_time_s, "model_calls": run.model_calls,
                    "judge_calls": run.judge_calls},
            "summary": run.summary, "replies": replies, "comparisons_as_candidate": comparisons}


def run_report(*, run: EvalRun) -> dict[str, Any]:
    """Rows for the admin report page: check rates and dimension means as bars (0–1 and 1–5)."""
    summary = run.summary or {}
    rates = summary.get("check_rates", {})
    raw = summary.get("raw_check_rates", {})
    check_rows = [{"name": name, "label": CHECK_LABELS.get(name, name), "rate": rates.get(name, 0.0),
                   "raw_rate": raw.get(name, rates.get(name, 0.0)),
                   "pct": round(100 * rates.get(name, 0.0)),
                   "raw_pct": round(100 * raw.get(name, rates.get(name, 0.0))),
                   "mean": (summary.get("check_means") or {}).get(name)} for name in CHECK_NAMES]
    dim_rows = []
    for dim, st in (summary.get("dimensions") or {}).items():
        mean = st.get("mean")
        dim_rows.append({"name": dim, "mean": mean, "stdev": st.get("stdev"), "n": st.get("n"),
                         "invalid": st.get("invalid"), "pct": round(100 * ((mean or 1) - 1) / 4) if mean else 0})
    per_transcript = []
    dims = [d["name"] for d in dim_rows]
    for slug, means in sorted((summary.get("per_transcript") or {}).items()):
        flags = (summary.get("per_transcript_checks") or {}).get(slug, {})
        per_transcript.append({"slug": slug, "means": [means.get(d) for d in dims],
                               "flags": [n for n in CHECK_NAMES if flags.get(n)]})
    comparisons = list(Comparison.objects.filter(candidate=run).select_related("baseline")[:5])
    return {"check_rows": check_rows, "dim_rows": dim_rows, "dims": dims, "per_transcript": per_transcript,
            "comparisons": comparisons, "summary": summary}


def judge_calibration_for(*, judge_model: str, rubric: Rubric | None) -> dict[str, dict[str, Any]] | None:
    """The per-dimension agreement of the newest complete calibration of this judge on this rubric
    (`evaluation.services.calibration.judge_calibrate`), or None when it was never calibrated."""
    run = (EvalRun.objects.filter(config__kind=CALIBRATION_KIND, config__judge_model=judge_model,
                                  config__complete=True, rubric=rubric, status=EvalRun.Status.DONE)
           .order_by("-created_at", "-pk").first())
    return (run.summary or {}).get("agreement") if run is not None else None


def judge_calibration_for_comparison(*, baseline: EvalRun, candidate: EvalRun) -> dict[str, dict[str, Any]] | None:
    """The calibration that lets the judge of a comparison decide: both runs scored by the same
    judge on the same rubric, and that judge calibrated. None otherwise (judge scores then count
    for nothing in the verdict)."""
    judge_model = candidate.config.get("judge_model") or ""
    same_judge = baseline.config.get("judge_model") == judge_model and baseline.rubric_id == candidate.rubric_id
    if not judge_model or not same_judge:
        return None
    return judge_calibration_for(judge_model=judge_model, rubric=candidate.rubric)
