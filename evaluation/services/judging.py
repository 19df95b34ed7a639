"""Pointwise judging of a replayed transcript: every reply scored on every rubric dimension,
`repeats` times with consecutive seeds, each score (or its invalid mark) stored as a JudgeScore."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.llm import call_context, job_model
from evaluation import judge
from evaluation.models import EvalRun, JudgeScore, ReplyResult, Transcript


def judge_default_model() -> str:
    """The configured judge (`BLOOM_JUDGE_LLM`, `BLOOM_LLM` when unset) as "provider:model"."""
    return job_model("judge")


def profile_line(profile: dict[str, Any]) -> str:
    """The learner's profile as the one line the judge is shown."""
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


def _history_before(transcript: Transcript, replies: list[ReplyResult], index: int) -> list[tuple[str, str]]:
    history = [(m.get("role", "learner"), m.get("text", "")) for m in transcript.prior_messages or []]
    for r in replies[:index]:
        history += [("learner", r.learner_text), ("coach", r.reply_text)]
    return history[-6:]


def judge_transcript(*, run: EvalRun, transcript: Transcript, replies: list[ReplyResult],
                     chat_fn: Callable[..., Any] | None = None) -> int:
    """Score the replies of one transcript; returns the number of judge calls made. `chat_fn`: the
    judge's chat function (a scripted fake in tests; None = the real `core.llm.chat`)."""
    config = run.config
    dims = run.rubric.dimensions
    keys = [d["key"] for d in dims]
    calls = 0
    for index, reply in enumerate(replies):
        if reply.error or not reply.reply_text.strip():
            continue
        messages = judge.build_pointwise_messages(
            dimensions=dims, profile_line=profile_line(transcript.starting_profile or {}),
            history=_history_before(transcript, replies, index), learner_text=reply.learner_text,
            reply_text=reply.reply_text, expected_behaviour=transcript.expected_behaviour)
        rows = []
        for repeat in range(int(config.get("repeats", 1))):
            with call_context(service="evaluation.judge", agent="judge", trace_id=reply.trace_id or ""):
                outcome = judge.call_judge(
                    messages=messages, keys=keys, schema=judge.pointwise_schema(keys), parse=judge.parse_pointwise,
                    model=config.get("judge_model") or judge_default_model(),
                    temperature=float(config.get("temperature", 0.0)),
                    seed=int(config.get("seed", 7)) + repeat, max_tokens=int(config.get("judge_max_tokens", 320)),
                    chat_fn=chat_fn)
            calls += outcome.calls
            for key, dim in outcome.scores.items():
                rows.append(JudgeScore(reply=reply, dimension=key, repeat_index=repeat, order=JudgeScore.Order.SINGLE,
                                       score=None if dim.invalid else dim.score, invalid=dim.invalid,
                                       reason=dim.reason or "; ".join(outcome.errors)[:500], attempts=outcome.attempts))
        JudgeScore.objects.bulk_create(rows)
    return calls
