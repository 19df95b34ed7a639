"""Running the deterministic checks on replayed replies: the context a check needs (what the
learner said so far, the coach's earlier replies, the profile values the turn saved), the raw model
output the guard replaced, and re-checking a stored run without calling any model."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import transaction
from django.utils import timezone

from coaching.models import Turn
from coaching.turn.prompts import SPECIALIST_PROMPTS, system_prompt
from evaluation.checks import CheckConfig, CheckContext, run_checks
from evaluation.models import EvalRun, ReplyResult, Transcript
from evaluation.replay import TurnOutcome, engine_templates
from evaluation.services.summaries import run_summarize


def _profile_updates(guard_events: list[Any]) -> tuple[tuple[str, Any], ...]:
    """The profile values the coaching gate saved this turn (recorded on its onboarding event)."""
    for event in guard_events or []:
        if isinstance(event, dict) and event.get("kind") == "onboarding" and event.get("updates"):
            return tuple((k, v) for k, v in event["updates"].items() if k != "onboarding_step")
    return ()


def _check_context(*, transcript: Transcript, outcome: Any, learner_text: str,
                   previous_replies: tuple[str, ...] = (), learner_history: tuple[str, ...] = ()) -> CheckContext:
    exp = transcript.expectations or {}
    prof = transcript.starting_profile or {}
    return CheckContext(
        context_snapshot=getattr(outcome, "context_snapshot", ""),
        # Checks about the model's words skip what code wrote: the engine's templates and this
        # turn's code-written part (a confirmation quoting the learner's goal is not the coach
        # speaking as the learner; the completion summary restating the profile is no leak).
        template_texts=tuple(t for t in (getattr(outcome, "code_text", ""),) if t) + engine_templates(),
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


def _prior_coach_texts(transcript: Transcript, results: list[ReplyResult]) -> tuple[str, ...]:
    prior = [m.get("text", "") for m in transcript.prior_messages or [] if m.get("role") == "coach"]
    return tuple(prior + [r.reply_text for r in results])


def _learner_texts(transcript: Transcript, results: list[ReplyResult], text: str) -> tuple[str, ...]:
    prior = [m.get("text", "") for m in transcript.prior_messages or [] if m.get("role", "learner") == "learner"]
    return tuple(prior + [r.learner_text for r in results] + [text])


def check_reply(*, transcript: Transcript, outcome: TurnOutcome, learner_text: str,
                earlier: list[ReplyResult], config: CheckConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    """The checks of one reply and of the raw model output behind it. `earlier`: the replies of the
    same transcript before this one (loop, profile values and example copies look back at them)."""
    ctx = _check_context(transcript=transcript, outcome=outcome, learner_text=learner_text,
                         previous_replies=_prior_coach_texts(transcript, earlier),
                         learner_history=_learner_texts(transcript, earlier, learner_text))
    return run_checks(outcome.reply_text, ctx, config), _raw_checks(outcome.raw_texts, ctx, config)


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
    check_cfg = CheckConfig(**run.config.get("check_config", {}))
    turns = {t.trace_id: t for t in Turn.objects.filter(
        trace_id__in=[r.trace_id for r in run.replies.all() if r.trace_id])}
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
            system_prompt=system_prompt(reply.specialist) if reply.specialist in SPECIALIST_PROMPTS else "",
            context_snapshot=turn.context_snapshot if turn else "", raw_texts=reply.raw_texts,
            onboarding_complete_before=onboarded, guard_events=reply.guard_events or [],
            code_text=turn.code_text if turn else "")
        reply.checks, reply.raw_checks = check_reply(transcript=reply.transcript, outcome=outcome,
                                                     learner_text=reply.learner_text, earlier=earlier,
                                                     config=check_cfg)
        reply.save(update_fields=["checks", "raw_checks"])
    notes = (run.summary or {}).get("notes", [])
    calls = (run.summary or {}).get("calls_by_operation", {})
    run.summary = {**run_summarize(run=run), "notes": notes, "calls_by_operation": calls, "rechecked_at":
                   timezone.now().isoformat()}
    run.save(update_fields=["summary"])
    return run
