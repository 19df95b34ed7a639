"""Judge calibration: the judge scores the hand-scored calibration set, its agreement with the hand
scores is measured per rubric dimension (Spearman and exact match), and the result is stored as a
run on the calibration set, so a later comparison can ask whether this judge may decide a verdict
(`evaluation.selectors.judge_calibration_for`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.llm import call_context
from evaluation import compare, judge
from evaluation.models import EvalRun, EvalSet, Rubric
from evaluation.selectors import CALIBRATION_KIND
from evaluation.services.judging import judge_default_model
from evaluation.services.sets import DATA_DIR

JUDGE_CALIBRATION_FILE = DATA_DIR / "judge_calibration_v2.json"


def judge_calibrate(*, rubric: Rubric, judge_model: str | None = None, path: Path = JUDGE_CALIBRATION_FILE,
                    chat_fn: Callable[..., Any] | None = None, limit: int | None = None,
                    seed: int = 7, max_tokens: int = 320) -> dict[str, Any]:
    """Score the hand-scored judge calibration set with the judge and report its agreement with
    the hand scores per rubric dimension (Spearman and exact match). A judge below the thresholds
    in `compare.Thresholds` may not decide a verdict (see `compare.compare_summaries`).

    The result is stored (see `calibration_store`); only a calibration over the whole set counts
    for a later comparison, so a `limit` run is stored but marked incomplete."""
    data = json.loads(Path(path).read_text())
    if data.get("kind") != "judge calibration set":
        raise ValueError(f"{path} is not a judge calibration set (its header 'kind' says {data.get('kind')!r})")
    judge_model = judge_model or judge_default_model()
    keys = rubric.dimension_keys
    items = data["items"][:limit] if limit else data["items"]
    pairs: list[tuple[str, int, int | None]] = []
    # Where each item's reply came from ("written" to show a defect class, or a real model's run):
    # a judge that agrees only with replies written to be scored has not been shown to judge real ones.
    by_origin: dict[str, list[tuple[str, int, int | None]]] = {}
    started_at, started = timezone.now(), time.perf_counter()
    calls = unavailable = 0
    for item in items:
        messages = judge.build_pointwise_messages(
            dimensions=rubric.dimensions, profile_line=item["profile_line"],
            history=[(role, text) for role, text in item.get("history", [])],
            learner_text=item["learner_text"], reply_text=item["reply"], expected_behaviour=item.get("expected", ""))
        with call_context(service="evaluation.judge_calibration", agent="judge"):
            outcome = judge.call_judge(messages=messages, keys=keys, schema=judge.pointwise_schema(keys),
                                       parse=judge.parse_pointwise, model=judge_model, temperature=0.0,
                                       seed=seed, max_tokens=max_tokens, chat_fn=chat_fn)
        calls += outcome.calls
        if outcome.unavailable:
            # The model never answered (timeout, breaker open): that says nothing about the judge,
            # so the item is left out, and the run cannot count as a calibration.
            unavailable += 1
            continue
        scored = [(k, int(item["scores"][k]), None if outcome.scores[k].invalid else outcome.scores[k].score)
                  for k in keys if k in item["scores"]]
        pairs += scored
        by_origin.setdefault(item.get("origin", "written"), []).extend(scored)
    agreement = compare.judge_agreement(pairs)
    trusted, why = compare.judge_trusted(agreement, compare.Thresholds())
    if unavailable:
        why = [f"{unavailable} of {len(items)} judge calls got no answer from the model (unavailable): "
               "this run measures the model server, not the judge", *why]
    result = {"judge_model": judge_model, "set": data.get("name"), "version": data.get("version"),
              "items": len(items), "unavailable_items": unavailable,
              "complete": len(items) == len(data["items"]) and not unavailable, "agreement": agreement,
              "trusted": trusted and not unavailable, "why_not": why,
              "agreement_by_origin": {origin: compare.judge_agreement(p) for origin, p in sorted(by_origin.items())}}
    run = calibration_store(data=data, rubric=rubric, result=result, seed=seed, max_tokens=max_tokens,
                            judge_calls=calls, started_at=started_at, wall_time_s=time.perf_counter() - started)
    return {**result, "run_id": str(run.public_id)}


@transaction.atomic
def calibration_store(*, data: dict[str, Any], rubric: Rubric, result: dict[str, Any], seed: int,
                      max_tokens: int, judge_calls: int, started_at: datetime, wall_time_s: float) -> EvalRun:
    """One finished run on the calibration set (an eval set of that name with no transcripts to
    replay): `config` names the judge and how it was asked, `summary` holds the agreement."""
    eval_set, _ = EvalSet.objects.get_or_create(
        name=data["name"], version=int(data.get("version", 1)),
        defaults={"description": data.get("description", "")})
    return EvalRun.objects.create(
        eval_set=eval_set, rubric=rubric, label=f"judge calibration · {result['judge_model']}"[:200],
        config={"kind": CALIBRATION_KIND, "judge_model": result["judge_model"], "temperature": 0.0, "seed": seed,
                "judge_max_tokens": max_tokens, "items": result["items"], "complete": result["complete"]},
        status=EvalRun.Status.DONE, started_at=started_at, finished_at=timezone.now(),
        wall_time_s=round(wall_time_s, 3), judge_calls=judge_calls, summary=result)
