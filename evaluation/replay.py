"""Replaying a transcript: a fresh learner with the transcript's starting profile and memory
snapshot, the frozen prior messages, then each learner turn through the coaching turn service.

`run_turn` is the single seam between evaluation and the coaching engine. It persists the learner
message (`coaching.services.message_receive`) and calls the real turn service
(`coaching.turn.turn_run`) with a per-run model and prompt variant. Only a run configured with
`engine="direct"` bypasses the engine (`_direct_turn`): one plain model call with a short coach
prompt, clearly recorded as `engine="direct"` in every ReplyResult, so such runs are never
mistaken for engine runs."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from coaching.models import ApiClient, Conversation, Learner, LearnerProfile, Message, OnboardingStep, Role
from coaching.onboarding import texts as onboarding_texts
from coaching.services import message_receive
from coaching.turn import prompts, turn_run
from core.llm import call_context, chat, embed, new_trace_id, register_observer, unregister_observer
from memory import rules
from memory.services.ingest import facts_ingest

logger = logging.getLogger(__name__)

EVAL_CLIENT_NAME = "evaluation (replays)"


@dataclass
class TurnOutcome:
    reply_text: str
    specialist: str = ""
    routing_reason: str = ""
    tool_calls: list[str] = field(default_factory=list)
    trace_id: str = ""
    model_calls: int = 0
    system_prompt: str = ""
    context_snapshot: str = ""  # the context block the engine gave the model (echo detection)
    # Model output before the coaching guard rewrote/replaced it (when the engine exposes it).
    raw_texts: list[str] = field(default_factory=list)
    guard_events: list[Any] = field(default_factory=list)
    outcome: str = "ok"
    engine: str = "coaching"
    onboarding_complete_before: bool = True
    conversation_id: int | None = None
    code_text: str = ""  # the part of the reply code wrote (the Turn's code_text)


@dataclass
class ReplayLearner:
    learner: Any
    conversation: Any
    notes: list[str] = field(default_factory=list)


# --- setup ----------------------------------------------------------------------------------
_PROFILE_FIELDS = ("primary_goal", "goal_category", "weekly_hours", "best_time", "confidence")


@transaction.atomic
def learner_setup(*, transcript: Any, run_id: int) -> ReplayLearner:
    """A brand-new learner per transcript and run: replays never share state."""
    notes: list[str] = []
    client, _ = ApiClient.objects.get_or_create(name=EVAL_CLIENT_NAME)
    learner = Learner.objects.create(client=client, display_name=f"eval run {run_id} · {transcript.slug}"[:120])
    prof = transcript.starting_profile or {}
    values: dict[str, Any] = {k: prof[k] for k in _PROFILE_FIELDS if prof.get(k) not in (None, "")}
    if "weekly_hours" in values:
        values["weekly_hours"] = Decimal(str(values["weekly_hours"]))
    step = prof.get("onboarding_step") or (OnboardingStep.DONE if len(values) == len(_PROFILE_FIELDS)
                                            else OnboardingStep.GOAL)
    LearnerProfile.objects.update_or_create(
        learner=learner,
        defaults={**values, "onboarding_step": step,
                  "onboarding_completed_at": timezone.now() if step == OnboardingStep.DONE else None})
    conversation = Conversation.objects.create(learner=learner)
    role_map = {"learner": Role.LEARNER, "coach": Role.COACH, "system": Role.SYSTEM}
    for item in transcript.prior_messages or []:
        Message.objects.create(conversation=conversation, role=role_map.get(item.get("role"), Role.LEARNER),
                               content=item.get("text", ""),
                               status="answered" if item.get("role") == "learner" else "")
    if transcript.memory_snapshot:
        notes.extend(_memory_insert(learner_id=learner.pk, facts=transcript.memory_snapshot))
    return ReplayLearner(learner=learner, conversation=conversation, notes=notes)


def _memory_insert(*, learner_id: int, facts: list[dict[str, Any]]) -> list[str]:
    """Insert the snapshot through the memory app's own ingest service (same dedup rules as
    production). Skipped with a note when embeddings are unavailable (no embedding model)."""
    try:
        clean = [rules.CleanFact(fact_type=f.get("fact_type", "insight"), content=f["content"],
                                 confidence=float(f.get("confidence", 0.9))) for f in facts]
        vectors = embed([c.content for c in clean])
        facts_ingest(learner_id=learner_id, facts=clean, embeddings=vectors, source_agent="evaluation",
                     service="evaluation.replay")
        return []
    except Exception as exc:  # the embedding model missing or failing: the replay goes on without memory
        logger.warning("memory snapshot not inserted: %s", exc)
        return [f"memory snapshot skipped: {type(exc).__name__}: {exc}"[:300]]


# --- one turn -------------------------------------------------------------------------------
# Prompt variants owned by evaluation, for experiments such as "a prompt change that makes
# replies longer". Applied to the engine's base prompt for the duration of a replayed turn.
PROMPT_VARIANTS = {
    "verbose-demo": ("You are Bloom, an enthusiastic learning coach chatting with one learner. Give thorough, "
                     "detailed answers that cover every angle: use headings, bullet points and bold key ideas, "
                     "and always include several concrete tips."),
}


class RawOutputCollector:
    """A core.llm observer keeping the text of every chat call per trace id: the model's raw
    output before the coaching guard flattened, cut or replaced it."""

    def __init__(self) -> None:
        self.by_trace: dict[str, list[str]] = {}

    def on_start(self, record: Any) -> None:
        pass

    def on_end(self, record: Any) -> None:
        if record.operation == "chat" and record.status == "ok" and isinstance(record.response, str):
            self.by_trace.setdefault(record.context.trace_id, []).append(record.response)


def run_turn(*, replay: ReplayLearner, text: str, config: dict[str, Any], turn_index: int) -> TurnOutcome:
    onboarded = LearnerProfile.objects.filter(learner=replay.learner, onboarding_step="done").exists()
    if config.get("engine", "coaching") == "coaching":
        outcome = _coaching_turn(replay=replay, text=text, config=config, turn_index=turn_index)
    else:
        outcome = _direct_turn(replay=replay, text=text, config=config)
    outcome.onboarding_complete_before = onboarded
    outcome.conversation_id = replay.conversation.pk
    return outcome


def _coaching_turn(*, replay: ReplayLearner, text: str, config: dict[str, Any], turn_index: int) -> TurnOutcome:
    message, _ = message_receive(conversation=replay.conversation, content=text,
                                 idempotency_key=f"eval-{turn_index}")
    collector = RawOutputCollector()
    register_observer(collector)
    variant = config.get("prompt_version") if config.get("prompt_version") in PROMPT_VARIANTS else None
    base_prompt = PROMPT_VARIANTS[variant] if variant else None
    try:
        result = turn_run(message=message, model=config.get("model") or None, base_prompt=base_prompt,
                    prompt_version=variant)
        system_prompt = prompts.system_prompt(result.turn.specialist, base=base_prompt) \
            if result.turn.specialist in prompts.SPECIALIST_PROMPTS else ""
    finally:
        unregister_observer(collector)
    turn = result.turn
    tools = [c.get("name", "") for c in (turn.tool_calls or []) if isinstance(c, dict) and c.get("ok", True)]
    return TurnOutcome(reply_text=result.reply.content, specialist=turn.specialist,
                       routing_reason=f"{turn.rule}: {turn.reason}"[:200], tool_calls=tools,
                       trace_id=turn.trace_id, model_calls=turn.model_calls, system_prompt=system_prompt,
                       context_snapshot=turn.context_snapshot or "",
                       raw_texts=collector.by_trace.get(turn.trace_id, []), guard_events=turn.guard_events or [],
                       outcome=turn.outcome, engine="coaching", code_text=turn.code_text)


# --- the direct engine: one plain model call, no coaching engine ------------------------------
DIRECT_PROMPTS = {
    "v1": ("You are Bloom, a warm learning coach chatting with one learner. Reply in at most 3 short sentences "
           "of plain text: no lists, no headings. Reflect what the learner said and ask one question before "
           "giving advice. Stay on the learner's own goal."),
    # A deliberately worse prompt for the "prompt change that makes replies longer" demonstration.
    "v1-verbose": ("You are Bloom, an enthusiastic learning coach. Give thorough, detailed answers covering every "
                   "angle, with headings, bullet points and bold key ideas, and several concrete tips."),
}


def _direct_turn(*, replay: ReplayLearner, text: str, config: dict[str, Any]) -> TurnOutcome:
    profile = LearnerProfile.objects.get(learner=replay.learner)
    system = DIRECT_PROMPTS.get(config.get("prompt_version") or "v1", DIRECT_PROMPTS["v1"])
    profile_line = (f"Learner goal: {profile.primary_goal or 'not given yet'} ({profile.goal_category or 'unknown'}); "
                    f"onboarding: {profile.onboarding_step}.")
    history = [{"role": "assistant" if m.role == "coach" else "user", "content": m.content}
               for m in Message.objects.filter(conversation=replay.conversation).order_by("created_at", "id")]
    messages = [{"role": "system", "content": f"{system}\n{profile_line}"}, *history[-8:],
                {"role": "user", "content": text}]
    trace = new_trace_id()
    started = time.perf_counter()
    with call_context(trace_id=trace, service="evaluation.replay", agent="direct",
                      learner_id=replay.learner.pk, conversation_id=replay.conversation.pk):
        result = chat(messages, model=config.get("model") or None,
                      options={"temperature": config.get("temperature", 0.0), "seed": config.get("seed", 7),
                               "max_tokens": config.get("max_tokens", 200)})
    logger.debug("direct turn in %.2fs", time.perf_counter() - started)
    Message.objects.create(conversation=replay.conversation, role="learner", content=text, status="answered")
    Message.objects.create(conversation=replay.conversation, role="coach", content=result.text, trace_id=trace)
    return TurnOutcome(reply_text=result.text, specialist="direct", routing_reason="direct engine: no coaching engine",
                       trace_id=trace, model_calls=1, system_prompt=system, context_snapshot=profile_line,
                       raw_texts=[result.text], engine="direct")


def engine_templates() -> tuple[str, ...]:
    """Text the engine renders in code (onboarding questions and re-prompts, fallbacks, the tracker
    acknowledgement). Checks about the *model's* behaviour ignore it: the category question lists
    "career" as an option, which is not the model drifting into career talk."""
    texts: list[str] = []
    for module in (onboarding_texts,):
        for name, value in vars(module).items():
            if not name.isupper():
                continue
            if isinstance(value, str) and len(value) > 15:
                texts.append(value)
            elif isinstance(value, dict):
                texts.extend(v for v in value.values() if isinstance(v, str) and len(v) > 15)
    texts.extend(v for v in getattr(prompts, "FALLBACKS", {}).values() if isinstance(v, str))
    if isinstance(getattr(prompts, "TRACKER_ACK", None), str):
        texts.append(prompts.TRACKER_ACK)
    # Longest first, so a template containing another is removed whole.
    return tuple(sorted(set(texts), key=len, reverse=True))
