"""Pairwise judging: the candidate's and the baseline's replies to the same learner turn judged
side by side, in both orders, stored as a run of its own (mode pairwise)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from core.llm import call_context
from evaluation import compare, judge
from evaluation.models import EvalRun, JudgeScore
from evaluation.services.judging import judge_default_model, profile_line
from evaluation.services.runs import DEFAULT_CONFIG, run_create

Progress = Callable[[str], None]


def pairwise_execute(*, baseline: EvalRun, candidate: EvalRun, config: dict[str, Any] | None = None,
                     chat_fn: Callable[..., Any] | None = None, progress: Progress | None = None) -> EvalRun:
    """Judge candidate vs baseline replies to the same learner turn in both orders. The two
    orders are combined in code: agreement counts, disagreement is a tie (position bias)."""
    config = {**DEFAULT_CONFIG, **(config or {}), "baseline_run": baseline.pk, "candidate_run": candidate.pk}
    run = run_create(eval_set=candidate.eval_set, config=config, rubric=candidate.rubric or baseline.rubric,
                     label=f"pairwise {baseline.public_id} vs {candidate.public_id}", mode=EvalRun.Mode.PAIRWISE)
    EvalRun.objects.filter(pk=run.pk).update(status=EvalRun.Status.RUNNING, started_at=timezone.now())
    started = time.perf_counter()
    dims = run.rubric.dimensions
    keys = [d["key"] for d in dims]
    base_by_key = {(r.transcript_id, r.turn_index): r for r in baseline.replies.select_related("transcript")}
    calls = 0
    for cand in candidate.replies.select_related("transcript").order_by("transcript__position", "turn_index"):
        base = base_by_key.get((cand.transcript_id, cand.turn_index))
        if base is None or cand.error or base.error:
            continue
        transcript = cand.transcript
        common = {"dimensions": dims, "profile_line": profile_line(transcript.starting_profile or {}),
                  "history": [(m.get("role", "learner"), m.get("text", "")) for m in transcript.prior_messages or []],
                  "learner_text": cand.learner_text, "expected_behaviour": transcript.expected_behaviour}
        rows = []
        for order, (a, b, sign) in {"ab": (base, cand, -1), "ba": (cand, base, 1)}.items():
            with call_context(service="evaluation.pairwise", agent="judge"):
                outcome = judge.call_judge(
                    messages=judge.build_pairwise_messages(reply_a=a.reply_text, reply_b=b.reply_text, **common),
                    keys=keys, schema=judge.pairwise_schema(keys), parse=judge.parse_pairwise,
                    model=config.get("judge_model") or judge_default_model(),
                    temperature=float(config.get("temperature", 0.0)),
                    seed=int(config.get("seed", 7)), max_tokens=int(config.get("judge_max_tokens", 320)),
                    chat_fn=chat_fn)
            calls += outcome.calls
            for key, d in outcome.scores.items():
                # Stored as the candidate's preference (+1 candidate better) whatever the order.
                rows.append(JudgeScore(reply=cand, other_reply=base, pairwise_run=run, dimension=key, order=order,
                                       score=None if d.invalid else d.score * sign, invalid=d.invalid,
                                       reason=d.reason or "; ".join(outcome.errors)[:500], attempts=outcome.attempts))
        JudgeScore.objects.bulk_create(rows)
        if progress:
            progress(transcript.slug)
    run.refresh_from_db()
    run.summary = pairwise_summarize(run=run)
    run.status = EvalRun.Status.DONE
    run.finished_at = timezone.now()
    run.wall_time_s = round(time.perf_counter() - started, 3)
    run.judge_calls = calls
    run.save()
    return run


def pairwise_summarize(*, run: EvalRun) -> dict[str, Any]:
    pairs: dict[tuple[int, str], dict[str, int | None]] = defaultdict(dict)
    for reply_id, dim, order, score in JudgeScore.objects.filter(pairwise_run=run).values_list(
            "reply_id", "dimension", "order", "score"):
        pairs[(reply_id, dim)][order] = score
    resolved = [(dim, compare.pairwise_resolve(v.get("ab"), v.get("ba"))) for (_r, dim), v in pairs.items()]
    return {"pairwise": compare.pairwise_summary(resolved),
            "reliability": {"order_consistency": compare.order_consistency(
                (v.get("ab"), v.get("ba")) for v in pairs.values())}}
