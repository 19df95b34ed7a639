"""Evaluation runs: the run configuration, creating a run, and executing it (replay every
transcript through the coaching engine, check every reply, judge it, summarise), with the model
layer's own count of the calls each transcript cost."""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from coaching.turn.prompts import PROMPT_VERSION
from core.llm import register_observer, unregister_observer
from evaluation import replay as replay_mod
from evaluation.checks import CheckConfig
from evaluation.models import EvalRun, EvalSet, ReplyResult, Rubric, Transcript
from evaluation.services.checking import check_reply
from evaluation.services.judging import judge_default_model, judge_transcript
from evaluation.services.summaries import run_summarize

logger = logging.getLogger(__name__)


DEFAULT_CONFIG: dict[str, Any] = {
    "engine": "coaching", "model": "", "prompt_version": "", "judge_model": "", "repeats": 1,
    "temperature": 0.0, "seed": 7, "judge_max_tokens": 320, "max_tokens": 200, "limit": None,
    "judge": True, "check_config": {},
}


def default_model() -> str:
    """The configured default model (`BLOOM_LLM`) as "provider:model": the coach and the judge
    when a run names neither."""
    spec = settings.BLOOM_LLM
    return f"{spec.provider}:{spec.model}"


def run_config(**overrides: Any) -> dict[str, Any]:
    config = {**DEFAULT_CONFIG, **{k: v for k, v in overrides.items() if v is not None}}
    model = config.get("model") or default_model()
    config["model"] = model
    config["provider"] = model.split(":", 1)[0]
    # The judge stays the configured default model unless asked otherwise: swapping the coach's
    # model must not silently swap the judge too (self-preference, incomparable scores).
    config["judge_model"] = config.get("judge_model") or judge_default_model()
    config["prompt_version"] = config.get("prompt_version") or PROMPT_VERSION
    return config


@transaction.atomic
def run_create(*, eval_set: EvalSet, config: dict[str, Any], rubric: Rubric | None = None, label: str = "",
               mode: str = EvalRun.Mode.REPLAY) -> EvalRun:
    rubric = rubric or Rubric.objects.order_by("-version").first()
    return EvalRun.objects.create(eval_set=eval_set, rubric=rubric, config=config, label=label[:200], mode=mode)


class CallCounter:
    """A core.llm observer counting model calls by operation and trace during a run, so "model
    calls per transcript" comes from the model layer itself rather than from our own bookkeeping."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_operation: dict[str, int] = defaultdict(int)
        self.by_trace: dict[str, int] = defaultdict(int)
        self.total = 0

    def on_start(self, record: Any) -> None:
        pass

    def on_end(self, record: Any) -> None:
        with self._lock:
            self.total += 1
            self.by_operation[record.operation] += 1
            if record.context.trace_id:
                self.by_trace[record.context.trace_id] += 1

    def coach_calls(self) -> int:
        return sum(n for op, n in self.by_operation.items() if op not in ("judge", "embeddings", "entities"))


@dataclass
class RunHooks:
    """Injection points for tests and the command: the judge's chat function (the scripted fake in
    unit tests; None = the real `core.llm.chat`) and a callback after each transcript."""

    judge_chat: Callable[..., Any] | None = None
    transcript_done: Callable[[Transcript], None] | None = None


def run_execute(*, run: EvalRun, hooks: RunHooks | None = None) -> EvalRun:
    """Replay every transcript of the run's set, check every reply, judge every reply, summarise.
    Each transcript is its own transaction so a crash keeps what was done."""
    hooks = hooks or RunHooks()
    config = run.config
    check_cfg = CheckConfig(**config.get("check_config", {}))
    transcripts = list(run.eval_set.transcripts.order_by("position", "slug"))
    if config.get("limit"):
        transcripts = transcripts[: int(config["limit"])]
    if config.get("slugs"):
        transcripts = [t for t in transcripts if t.slug in set(config["slugs"])]
    EvalRun.objects.filter(pk=run.pk).update(status=EvalRun.Status.RUNNING, started_at=timezone.now(), error="")
    counter = CallCounter()
    register_observer(counter)
    started = time.perf_counter()
    replay_s = judge_s = 0.0
    judge_calls = 0
    notes: list[str] = []
    try:
        for transcript in transcripts:
            t0 = time.perf_counter()
            replies = _replay_transcript(run=run, transcript=transcript, check_cfg=check_cfg, counter=counter,
                                         notes=notes)
            replay_s += time.perf_counter() - t0
            if config.get("judge", True) and run.rubric is not None:
                t1 = time.perf_counter()
                judge_calls += judge_transcript(run=run, transcript=transcript, replies=replies,
                                                chat_fn=hooks.judge_chat)
                judge_s += time.perf_counter() - t1
            if hooks.transcript_done:
                hooks.transcript_done(transcript)
    except Exception as exc:
        unregister_observer(counter)
        EvalRun.objects.filter(pk=run.pk).update(
            status=EvalRun.Status.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now(), wall_time_s=time.perf_counter() - started)
        raise
    unregister_observer(counter)
    run.refresh_from_db()
    run.status = EvalRun.Status.DONE
    run.finished_at = timezone.now()
    run.wall_time_s = round(time.perf_counter() - started, 3)
    run.replay_time_s = round(replay_s, 3)
    run.judge_time_s = round(judge_s, 3)
    run.model_calls = counter.coach_calls() or sum(r.model_calls for r in run.replies.all())
    run.judge_calls = counter.by_operation.get("judge", 0) or judge_calls
    run.summary = run_summarize(run=run)
    run.summary["notes"] = sorted(set(notes))[:50]
    run.summary["calls_by_operation"] = dict(counter.by_operation)
    run.save()
    return run


def _replay_transcript(*, run: EvalRun, transcript: Transcript, check_cfg: CheckConfig, counter: CallCounter,
                       notes: list[str]) -> list[ReplyResult]:
    replay = replay_mod.learner_setup(transcript=transcript, run_id=run.pk)
    notes.extend(replay.notes)
    results: list[ReplyResult] = []
    for index, turn in enumerate(transcript.learner_turns):
        text = turn["text"] if isinstance(turn, dict) else str(turn)
        t0 = time.perf_counter()
        error = ""
        try:
            outcome = replay_mod.run_turn(replay=replay, text=text, config=run.config, turn_index=index)
        except Exception as exc:  # a failed turn is a result too (model down, engine bug)
            logger.exception("replay turn failed: %s #%s", transcript.slug, index)
            outcome = replay_mod.TurnOutcome(reply_text="", engine="error")
            error = f"{type(exc).__name__}: {exc}"[:1000]
        latency = time.perf_counter() - t0
        checks, raw_checks = ({}, {}) if error else check_reply(
            transcript=transcript, outcome=outcome, learner_text=text, earlier=results, config=check_cfg)
        calls = counter.by_trace.get(outcome.trace_id, 0) if outcome.trace_id else 0
        results.append(ReplyResult.objects.create(
            run=run, transcript=transcript, turn_index=index, learner_text=text, reply_text=outcome.reply_text,
            specialist=outcome.specialist[:60], routing_reason=outcome.routing_reason[:200],
            tool_calls=outcome.tool_calls, checks=checks, trace_id=outcome.trace_id[:64],
            conversation_id=outcome.conversation_id, engine=outcome.engine, raw_texts=outcome.raw_texts,
            raw_checks=raw_checks, guard_events=outcome.guard_events, outcome=outcome.outcome[:20],
            model_calls=calls or outcome.model_calls, latency_s=round(latency, 3), error=error))
    return results
