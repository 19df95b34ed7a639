"""A run's summary: check rates (final replies and raw model output), judge dimension statistics,
reliability and guard/fallback rates, over a whole run or over a subset of its transcripts."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from coaching.turn.guard import BOOKKEEPING_KINDS
from evaluation import compare
from evaluation.models import EvalRun, JudgeScore, ReplyResult
from telemetry.selectors import percentile


def guard_fired_on(events: list[Any] | None) -> bool:
    """The guard acted on this reply (regenerated, rewrote, cut, replaced or dropped something).
    The engine's own bookkeeping events (gate decisions, intent readings) are stored with the
    guard's on a Turn but are not the guard acting, so they do not count."""
    return any(not (isinstance(e, dict) and e.get("kind") in BOOKKEEPING_KINDS) for e in events or [])


def run_summarize(*, run: EvalRun) -> dict[str, Any]:
    replies = list(run.replies.select_related("transcript"))
    ok = [r for r in replies if not r.error]
    check_rows = [r.checks for r in ok]
    raw_rows = [r.raw_checks or r.checks for r in ok]
    per_transcript_checks: dict[str, dict[str, float]] = {}
    by_slug: dict[str, list[ReplyResult]] = defaultdict(list)
    for r in ok:
        by_slug[r.transcript.slug].append(r)
    for slug, rs in by_slug.items():
        per_transcript_checks[slug] = compare.check_rates([r.checks for r in rs])
    scores = list(JudgeScore.objects.filter(reply__run=run, order=JudgeScore.Order.SINGLE)
                  .values_list("reply_id", "reply__transcript__slug", "dimension", "repeat_index", "score"))
    repeats: dict[tuple[int, str], list[int | None]] = defaultdict(list)
    for reply_id, _slug, dim, _rep, score in scores:
        repeats[(reply_id, dim)].append(score)
    guard_fired = sum(1 for r in ok if guard_fired_on(r.guard_events))
    fallback = sum(1 for r in ok if r.outcome == "fallback")
    templated = sum(1 for r in ok if r.outcome == "templated")
    n = len(ok)
    return {
        "replies": len(replies), "errors": len(replies) - n, "transcripts": len(by_slug),
        "check_rates": compare.check_rates(check_rows),
        "raw_check_rates": compare.check_rates(raw_rows),
        "check_means": compare.check_means(check_rows),
        "dimensions": compare.dimension_stats((dim, score) for _r, _s, dim, _rep, score in scores),
        "per_transcript": compare.per_transcript_means((slug, dim, score) for _r, slug, dim, _rep, score in scores),
        "per_transcript_checks": per_transcript_checks,
        "judge_invalid": sum(1 for *_x, score in scores if score is None),
        "judge_scores": len(scores),
        "reliability": {"self_agreement": compare.self_agreement(repeats.items())},
        "guard_fired_rate": round(guard_fired / n, 4) if n else 0.0,
        "fallback_rate": round(fallback / n, 4) if n else 0.0,
        "templated_rate": round(templated / n, 4) if n else 0.0,
        "engine": sorted({r.engine for r in replies}),
        "model_calls_per_transcript": round(sum(r.model_calls for r in ok) / len(by_slug), 3) if by_slug else 0.0,
        "model_turn_latency_s": _percentiles([r.latency_s for r in ok if r.model_calls and r.latency_s is not None]),
    }


def _percentiles(values: list[float]) -> dict[str, float | int]:
    """p50 / p95 / max of a turn's whole time (the learner waits for all of it), by the same
    definition as telemetry's latencies (telemetry.selectors.percentile)."""
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {"n": len(ordered), "p50": round(percentile(ordered, 0.5), 3), "p95": round(percentile(ordered, 0.95), 3),
            "max": round(ordered[-1], 3)}


def restricted_summary(run: EvalRun, slugs: set[str]) -> dict[str, Any]:
    """Recompute a run's summary over a subset of transcripts (in memory, nothing saved)."""
    replies = [r for r in run.replies.select_related("transcript") if r.transcript.slug in slugs and not r.error]
    scores = list(JudgeScore.objects.filter(reply__in=replies, order=JudgeScore.Order.SINGLE)
                  .values_list("reply__transcript__slug", "dimension", "score"))
    n = len(replies)
    return {
        "check_rates": compare.check_rates([r.checks for r in replies]),
        "raw_check_rates": compare.check_rates([r.raw_checks or r.checks for r in replies]),
        "check_means": compare.check_means([r.checks for r in replies]),
        "dimensions": compare.dimension_stats((d, s) for _slug, d, s in scores),
        "per_transcript": compare.per_transcript_means(scores),
        "per_transcript_checks": {slug: compare.check_rates([r.checks for r in replies if r.transcript.slug == slug])
                                  for slug in slugs},
        "guard_fired_rate": round(sum(1 for r in replies if guard_fired_on(r.guard_events)) / n, 4) if n else 0.0,
        "fallback_rate": round(sum(1 for r in replies if r.outcome == "fallback") / n, 4) if n else 0.0,
    }
