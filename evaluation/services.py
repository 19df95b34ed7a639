"""Writes for evaluation: loading sets and rubrics, executing runs (replay + deterministic checks +
judge), summarising, comparing, pairwise judging and freezing real conversations into a set."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evaluation import compare, judge
from evaluation.checks import CheckConfig, CheckContext, run_checks
from evaluation.models import Comparison, EvalRun, EvalSet, JudgeScore, ReplyResult, Rubric, Transcript

logger = logging.getLogger(__name__)

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_SET_FILE = DATA_DIR / "core_v1.json"
DEFAULT_RUBRIC_FILE = DATA_DIR / "rubric_v1.json"
JUDGE_CALIBRATION_FILE = DATA_DIR / "judge_calibration_v1.json"

Progress = Callable[[str], None]


# --- loading --------------------------------------------------------------------------------
@transaction.atomic
def eval_set_load(*, data: dict[str, Any]) -> EvalSet:
    """Create or update a set from its data file. Idempotent: transcripts are keyed by slug, so
    loading twice changes nothing; transcripts added from the admin (frozen) are kept."""
    eval_set, _ = EvalSet.objects.update_or_create(
        name=data["name"], version=int(data.get("version", 1)),
        defaults={"description": data.get("description", "")})
    for position, item in enumerate(data["transcripts"]):
        turns = [t if isinstance(t, dict) else {"text": t} for t in item["turns"]]
        Transcript.objects.update_or_create(
            eval_set=eval_set, slug=item["slug"],
            defaults={"title": item.get("title", item["slug"]), "tags": item.get("tags", []),
                      "starting_profile": item.get("profile", {}), "memory_snapshot": item.get("memory", []),
                      "learner_turns": turns, "prior_messages": item.get("prior", []),
                      "expected_behaviour": item.get("expected", ""), "expectations": item.get("expectations", {}),
                      "position": position})
    return eval_set


def eval_set_load_file(*, path: Path = DEFAULT_SET_FILE) -> EvalSet:
    return eval_set_load(data=json.loads(Path(path).read_text()))


@transaction.atomic
def rubric_load(*, data: dict[str, Any]) -> Rubric:
    """Create the rubric version if missing. An existing version is never overwritten from the file:
    staff may have edited it in the admin; a changed rubric should be a new version."""
    rubric, _ = Rubric.objects.get_or_create(
        version=int(data["version"]), defaults={"dimensions": data["dimensions"], "notes": data.get("notes", "")})
    return rubric


def rubric_load_file(*, path: Path = DEFAULT_RUBRIC_FILE) -> Rubric:
    return rubric_load(data=json.loads(Path(path).read_text()))


# --- runs -----------------------------------------------------------------------------------
DEFAULT_CONFIG: dict[str, Any] = {
    "engine": "coaching", "model": "", "prompt_version": "", "judge_model": "", "repeats": 1,
    "temperature": 0.0, "seed": 7, "judge_max_tokens": 320, "max_tokens": 200, "limit": None,
    "judge": True, "check_config": {},
}


def run_config(**overrides: Any) -> dict[str, Any]:
    config = {**DEFAULT_CONFIG, **{k: v for k, v in overrides.items() if v is not None}}
    spec = settings.BLOOM_LLM
    model = config.get("model") or f"{spec.provider}:{spec.model}"
    config["model"] = model
    config["provider"] = model.split(":", 1)[0]
    # The judge stays the configured default model unless asked otherwise: swapping the coach's
    # model must not silently swap the judge too (self-preference, incomparable scores).
    config["judge_model"] = config.get("judge_model") or f"{spec.provider}:{spec.model}"
    if not config.get("prompt_version"):
        try:
            from coaching.prompts import PROMPT_VERSION

            config["prompt_version"] = PROMPT_VERSION
        except ImportError:
            config["prompt_version"] = "v1"
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


def _profile_line(profile: dict[str, Any]) -> str:
    if not profile.get("primary_goal"):
        return f"Goal not given yet (onboarding step: {profile.get('onboarding_step', 'goal')})."
    parts = [f"Goal: {profile['primary_goal']} ({profile.get('goal_category', 'other')})"]
    if profile.get("weekly_hours"):
        parts.append(f"{profile['weekly_hours']} h/week")
    if profile.get("best_time"):
        parts.append(f"best time {profile['best_time']}")
    if profile.get("confidence"):
        parts.append(f"confidence {profile['confidence']}/10")
    parts.append(f"onboarding: {profile.get('onboarding_step', 'done')}")
    return " · ".join(parts)


def _profile_updates(guard_events: list[Any]) -> tuple[tuple[str, Any], ...]:
    """The profile values the coaching gate saved this turn (recorded on its onboarding event)."""
    for event in guard_events or []:
        if isinstance(event, dict) and event.get("kind") == "onboarding" and event.get("updates"):
            return tuple((k, v) for k, v in event["updates"].items() if k != "onboarding_step")
    return ()


def _check_context(*, transcript: Transcript, outcome: Any, learner_text: str,
                   previous_replies: tuple[str, ...] = (), learner_history: tuple[str, ...] = ()) -> CheckContext:
    from evaluation.replay import engine_templates

    exp = transcript.expectations or {}
    prof = transcript.starting_profile or {}
    return CheckContext(
        context_snapshot=getattr(outcome, "context_snapshot", ""),
        template_texts=engine_templates(),
        goal_category=exp.get("goal_category") or prof.get("goal_category", ""),
        primary_goal=prof.get("primary_goal", ""),
        onboarding_complete=outcome.onboarding_complete_before,
        tool_calls=tuple(outcome.tool_calls),
        must_not_mention=tuple(exp.get("must_not_mention", [])),
        learner_text=learner_text,
        system_prompt=outcome.system_prompt,
        previous_replies=previous_replies,
        learner_history=learner_history or (learner_text,),
        profile_updates=_profile_updates(getattr(outcome, "guard_events", [])),
    )


@dataclass
class RunHooks:
    """Injection points for tests and the command: a progress callback and the judge's chat
    function (the scripted fake in unit tests; None = the real `core.llm.chat`)."""

    progress: Progress | None = None
    judge_chat: Callable[..., Any] | None = None
    transcript_done: Callable[[Transcript], None] | None = None
    notes: list[str] = field(default_factory=list)


def run_execute(*, run: EvalRun, hooks: RunHooks | None = None) -> EvalRun:
    """Replay every transcript of the run's set, check every reply, judge every reply, summarise.
    Each transcript is its own transaction so a crash keeps what was done."""
    from core.llm import register_observer, unregister_observer

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
                judge_calls += _judge_transcript(run=run, transcript=transcript, replies=replies, hooks=hooks)
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
    from evaluation import replay as replay_mod

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
        ctx = _check_context(transcript=transcript, outcome=outcome, learner_text=text,
                             previous_replies=_prior_coach_texts(transcript, results),
                             learner_history=_learner_texts(transcript, results, text))
        checks = run_checks(outcome.reply_text, ctx, check_cfg) if not error else {}
        raw_checks = _raw_checks(outcome.raw_texts, ctx, check_cfg)
        calls = counter.by_trace.get(outcome.trace_id, 0) if outcome.trace_id else 0
        results.append(ReplyResult.objects.create(
            run=run, transcript=transcript, turn_index=index, learner_text=text, reply_text=outcome.reply_text,
            specialist=outcome.specialist[:60], routing_reason=outcome.routing_reason[:200],
            tool_calls=outcome.tool_calls, checks=checks, trace_id=outcome.trace_id[:64],
            conversation_id=outcome.conversation_id, engine=outcome.engine, raw_texts=outcome.raw_texts,
            raw_checks=raw_checks, guard_events=outcome.guard_events, outcome=outcome.outcome[:20],
            model_calls=calls or outcome.model_calls, latency_s=round(latency, 3), error=error))
    return results


def _prior_coach_texts(transcript: Transcript, results: list[ReplyResult]) -> tuple[str, ...]:
    prior = [m.get("text", "") for m in transcript.prior_messages or [] if m.get("role") == "coach"]
    return tuple(prior + [r.reply_text for r in results])


def _learner_texts(transcript: Transcript, results: list[ReplyResult], text: str) -> tuple[str, ...]:
    prior = [m.get("text", "") for m in transcript.prior_messages or [] if m.get("role", "learner") == "learner"]
    return tuple(prior + [r.learner_text for r in results] + [text])


def _raw_checks(raw_texts: list[str], ctx: CheckContext, cfg: CheckConfig) -> dict[str, dict[str, Any]]:
    """The guard's raw candidates: a check is flagged when any text the model produced trips it."""
    out: dict[str, dict[str, Any]] = {}
    for raw in raw_texts or []:
        for name, res in run_checks(raw, ctx, cfg).items():
            prev = out.get(name)
            if prev is None or (res["flag"] and not prev["flag"]) or (res["flag"] == prev["flag"]
                                                                     and res["value"] > prev["value"]):
                out[name] = res
    return out


@transaction.atomic
def run_recheck(*, run: EvalRun) -> EvalRun:
    """Re-run the deterministic checks on a finished run's stored replies (after a check was
    improved): pure functions over stored text and the turn's recorded context, no model calls.
    Judge scores are kept."""
    from evaluation.replay import TurnOutcome

    check_cfg = CheckConfig(**run.config.get("check_config", {}))
    turns: dict[str, Any] = {}
    try:
        from coaching.models import Turn

        turns = {t.trace_id: t for t in Turn.objects.filter(
            trace_id__in=[r.trace_id for r in run.replies.all() if r.trace_id])}
    except ImportError:
        turns = {}
    try:
        from coaching.prompts import SPECIALIST_PROMPTS, system_prompt
    except ImportError:
        SPECIALIST_PROMPTS, system_prompt = {}, None
    done: dict[int, list[ReplyResult]] = defaultdict(list)
    for reply in run.replies.select_related("transcript").order_by("transcript_id", "turn_index"):
        earlier = done[reply.transcript_id]
        done[reply.transcript_id].append(reply)
        if reply.error:
            continue
        turn = turns.get(reply.trace_id)
        # Whether onboarding was complete before the turn was recorded by the original check.
        onboarded = reply.checks.get("premature_advice", {}).get("detail") == "onboarding complete"
        outcome = TurnOutcome(
            reply_text=reply.reply_text, tool_calls=list(reply.tool_calls or []), trace_id=reply.trace_id,
            system_prompt=system_prompt(reply.specialist) if system_prompt and reply.specialist in SPECIALIST_PROMPTS
            else "", context_snapshot=turn.context_snapshot if turn else "", raw_texts=reply.raw_texts,
            onboarding_complete_before=onboarded, guard_events=reply.guard_events or [])
        ctx = _check_context(transcript=reply.transcript, outcome=outcome, learner_text=reply.learner_text,
                             previous_replies=_prior_coach_texts(reply.transcript, earlier),
                             learner_history=_learner_texts(reply.transcript, earlier, reply.learner_text))
        reply.checks = run_checks(reply.reply_text, ctx, check_cfg)
        reply.raw_checks = _raw_checks(reply.raw_texts, ctx, check_cfg)
        reply.save(update_fields=["checks", "raw_checks"])
    notes = (run.summary or {}).get("notes", [])
    calls = (run.summary or {}).get("calls_by_operation", {})
    run.summary = {**run_summarize(run=run), "notes": notes, "calls_by_operation": calls, "rechecked_at":
                   timezone.now().isoformat()}
    run.save(update_fields=["summary"])
    return run


def _history_before(transcript: Transcript, replies: list[ReplyResult], index: int) -> list[tuple[str, str]]:
    history = [(m.get("role", "learner"), m.get("text", "")) for m in transcript.prior_messages or []]
    for r in replies[:index]:
        history += [("learner", r.learner_text), ("coach", r.reply_text)]
    return history[-6:]


def _judge_transcript(*, run: EvalRun, transcript: Transcript, replies: list[ReplyResult], hooks: RunHooks) -> int:
    from core.llm import call_context

    config = run.config
    dims = run.rubric.dimensions
    keys = [d["key"] for d in dims]
    calls = 0
    for index, reply in enumerate(replies):
        if reply.error or not reply.reply_text.strip():
            continue
        messages = judge.build_pointwise_messages(
            dimensions=dims, profile_line=_profile_line(transcript.starting_profile or {}),
            history=_history_before(transcript, replies, index), learner_text=reply.learner_text,
            reply_text=reply.reply_text, expected_behaviour=transcript.expected_behaviour)
        rows = []
        for repeat in range(int(config.get("repeats", 1))):
            with call_context(service="evaluation.judge", agent="judge", trace_id=reply.trace_id or ""):
                outcome = judge.call_judge(
                    messages=messages, keys=keys, schema=judge.pointwise_schema(keys), parse=judge.parse_pointwise,
                    model=config.get("judge_model") or None, temperature=float(config.get("temperature", 0.0)),
                    seed=int(config.get("seed", 7)) + repeat, max_tokens=int(config.get("judge_max_tokens", 320)),
                    chat_fn=hooks.judge_chat)
            calls += outcome.calls
            for key, dim in outcome.scores.items():
                rows.append(JudgeScore(reply=reply, dimension=key, repeat_index=repeat, order=JudgeScore.Order.SINGLE,
                                       score=None if dim.invalid else dim.score, invalid=dim.invalid,
                                       reason=dim.reason or "; ".join(outcome.errors)[:500], attempts=outcome.attempts))
        JudgeScore.objects.bulk_create(rows)
    return calls


def judge_reply_scores(*, reply: ReplyResult, rubric: Rubric, config: dict[str, Any],
                       chat_fn: Callable[..., Any] | None = None, repeat_index: int = 0) -> list[JudgeScore]:
    """Judge one stored reply (used by tests and re-judging): returns the saved score rows."""
    transcript = reply.transcript
    replies = list(reply.run.replies.filter(transcript=transcript).order_by("turn_index"))
    index = next(i for i, r in enumerate(replies) if r.pk == reply.pk)
    keys = rubric.dimension_keys
    messages = judge.build_pointwise_messages(
        dimensions=rubric.dimensions, profile_line=_profile_line(transcript.starting_profile or {}),
        history=_history_before(transcript, replies, index), learner_text=reply.learner_text,
        reply_text=reply.reply_text, expected_behaviour=transcript.expected_behaviour)
    outcome = judge.call_judge(messages=messages, keys=keys, schema=judge.pointwise_schema(keys),
                               parse=judge.parse_pointwise, model=config.get("judge_model") or None,
                               temperature=float(config.get("temperature", 0.0)),
                               seed=int(config.get("seed", 7)) + repeat_index,
                               max_tokens=int(config.get("judge_max_tokens", 320)), chat_fn=chat_fn)
    rows = [JudgeScore(reply=reply, dimension=k, repeat_index=repeat_index, order=JudgeScore.Order.SINGLE,
                       score=None if d.invalid else d.score, invalid=d.invalid,
                       reason=d.reason or "; ".join(outcome.errors)[:500], attempts=outcome.attempts)
            for k, d in outcome.scores.items()]
    return JudgeScore.objects.bulk_create(rows)


# --- summaries ------------------------------------------------------------------------------
def guard_fired_on(events: list[Any] | None) -> bool:
    """The guard acted on this reply (regenerated, rewrote, cut, replaced or dropped something).
    The engine's own bookkeeping events (gate decisions, intent readings) are stored with the
    guard's on a Turn but are not the guard acting, so they do not count."""
    from coaching.guard import BOOKKEEPING_KINDS

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
    }


# --- comparison -----------------------------------------------------------------------------
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


def judge_calibrate(*, rubric: Rubric, judge_model: str | None = None, path: Path = JUDGE_CALIBRATION_FILE,
                    chat_fn: Callable[..., Any] | None = None, limit: int | None = None,
                    seed: int = 7, max_tokens: int = 320) -> dict[str, Any]:
    """Score the hand-scored judge calibration set with the judge and report its agreement with
    the hand scores per rubric dimension (Spearman and exact match). A judge below the thresholds
    in `compare.Thresholds` may not decide a verdict (see `compare.compare_summaries`)."""
    from core.llm import call_context

    data = json.loads(Path(path).read_text())
    if data.get("kind") != "judge calibration set":
        raise ValueError(f"{path} is not a judge calibration set (its header 'kind' says {data.get('kind')!r})")
    keys = rubric.dimension_keys
    items = data["items"][:limit] if limit else data["items"]
    pairs: list[tuple[str, int, int | None]] = []
    for item in items:
        messages = judge.build_pointwise_messages(
            dimensions=rubric.dimensions, profile_line=item["profile_line"], history=[],
            learner_text=item["learner_text"], reply_text=item["reply"], expected_behaviour="")
        with call_context(service="evaluation.judge_calibration", agent="judge"):
            outcome = judge.call_judge(messages=messages, keys=keys, schema=judge.pointwise_schema(keys),
                                       parse=judge.parse_pointwise, model=judge_model or None, temperature=0.0,
                                       seed=seed, max_tokens=max_tokens, chat_fn=chat_fn)
        pairs += [(k, int(item["scores"][k]), None if outcome.scores[k].invalid else outcome.scores[k].score)
                  for k in keys if k in item["scores"]]
    agreement = compare.judge_agreement(pairs)
    trusted, why = compare.judge_trusted(agreement, compare.Thresholds())
    return {"judge_model": judge_model or "", "set": data.get("name"), "version": data.get("version"),
            "items": len(items), "agreement": agreement, "trusted": trusted, "why_not": why}


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
        b = _comparable(_restricted_summary(baseline, common))
        c = _comparable(_restricted_summary(candidate, common))
    pairwise = (pairwise_run.summary or {}).get("pairwise") if pairwise_run else None
    result = compare.compare_summaries(b, c, thresholds=thresholds, pairwise=pairwise,
                                       judge_calibration=judge_calibration)
    return Comparison.objects.create(baseline=baseline, candidate=candidate, deltas=result.deltas,
                                     verdict=result.verdict, reasons=result.reasons, thresholds=result.thresholds,
                                     pairwise_run=pairwise_run)


def _restricted_summary(run: EvalRun, slugs: set[str]) -> dict[str, Any]:
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


# --- pairwise -------------------------------------------------------------------------------
def pairwise_execute(*, baseline: EvalRun, candidate: EvalRun, config: dict[str, Any] | None = None,
                     chat_fn: Callable[..., Any] | None = None, progress: Progress | None = None) -> EvalRun:
    """Judge candidate vs baseline replies to the same learner turn in both orders. The two
    orders are combined in code: agreement counts, disagreement is a tie (position bias)."""
    from core.llm import call_context

    config = {**DEFAULT_CONFIG, **(config or {}), "baseline_run": baseline.pk, "candidate_run": candidate.pk}
    run = run_create(eval_set=candidate.eval_set, config=config, rubric=candidate.rubric or baseline.rubric,
                     label=f"pairwise #{baseline.pk} vs #{candidate.pk}", mode=EvalRun.Mode.PAIRWISE)
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
        common = {"dimensions": dims, "profile_line": _profile_line(transcript.starting_profile or {}),
                  "history": [(m.get("role", "learner"), m.get("text", "")) for m in transcript.prior_messages or []],
                  "learner_text": cand.learner_text, "expected_behaviour": transcript.expected_behaviour}
        rows = []
        for order, (a, b, sign) in {"ab": (base, cand, -1), "ba": (cand, base, 1)}.items():
            with call_context(service="evaluation.pairwise", agent="judge"):
                outcome = judge.call_judge(
                    messages=judge.build_pairwise_messages(reply_a=a.reply_text, reply_b=b.reply_text, **common),
                    keys=keys, schema=judge.pairwise_schema(keys), parse=judge.parse_pairwise,
                    model=config.get("judge_model") or None, temperature=float(config.get("temperature", 0.0)),
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


# --- freezing real conversations ------------------------------------------------------------
@transaction.atomic
def transcript_freeze_from_conversation(*, conversation_id: int, eval_set_id: int, slug: str = "",
                                        tags: list[str] | None = None) -> Transcript:
    """Copy a real conversation into a set, frozen as it was: the profile and memory facts as they
    are now, the learner messages as turns. Idempotent per (set, conversation)."""
    from coaching.models import Conversation, LearnerProfile, Message

    conversation = Conversation.objects.select_related("learner").get(pk=conversation_id)
    eval_set = EvalSet.objects.get(pk=eval_set_id)
    existing = Transcript.objects.filter(eval_set=eval_set, frozen_from_conversation_id=conversation_id).first()
    if existing is not None:
        return existing
    profile = LearnerProfile.objects.filter(learner=conversation.learner).first()
    starting_profile: dict[str, Any] = {}
    if profile is not None:
        starting_profile = {"primary_goal": profile.primary_goal, "goal_category": profile.goal_category,
                            "weekly_hours": float(profile.weekly_hours) if profile.weekly_hours is not None else None,
                            "best_time": profile.best_time, "confidence": profile.confidence,
                            "onboarding_step": profile.onboarding_step}
    memory_snapshot: list[dict[str, Any]] = []
    try:
        from memory.models import Fact

        memory_snapshot = [{"fact_type": f.fact_type, "content": f.content, "confidence": f.confidence}
                           for f in Fact.objects.filter(learner=conversation.learner).order_by("created_at")[:50]]
    except (ImportError, LookupError, AttributeError):
        memory_snapshot = []
    messages = list(Message.objects.filter(conversation=conversation).order_by("created_at", "id"))
    turns = [{"text": m.content, "original_reply": next(
        (r.content for r in messages if r.reply_to_id == m.pk), "")} for m in messages if m.role == "learner"]
    category = starting_profile.get("goal_category") or ""
    position = (Transcript.objects.filter(eval_set=eval_set).order_by("-position").values_list("position", flat=True)
                .first() or 0) + 1
    return Transcript.objects.create(
        eval_set=eval_set, slug=(slug or f"conversation-{conversation_id}")[:100],
        title=f"Frozen conversation {conversation_id}", tags=tags or ["frozen"],
        starting_profile=starting_profile, memory_snapshot=memory_snapshot, learner_turns=turns,
        expected_behaviour="Frozen from a real conversation; see the original replies in learner_turns.",
        expectations={"goal_category": category} if category else {},
        frozen_from_conversation_id=conversation_id, position=position)
