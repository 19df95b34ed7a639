"""One chat turn: route (code) → context (code) → specialist (code actions + model phrasing) →
guard (code) → persist once (+ outbox for memory extraction).

THE MODEL/CODE BOUNDARY, in one place:
- code decides: which specialist (router.py), whether onboarding advances and every profile value
  (onboarding.py), the plan options offered and which one "option B"/"yes" means, which session a
  "done"/"skipped" refers to, every write (schedule_session, log_checkin), length, leaks, honesty.
- the model decides: the wording of the reply (and, in the optional read-only tool loop, which
  read tools to consult). If the model is down, deterministic specialists answer from templates;
  free-form specialists return "unavailable" and the learner message is kept as unanswered.

`turn_run(message=..., emit=...)` is synchronous; `emit(text)` receives tokens as they are
generated (the SSE view runs it in a worker thread). The returned TurnResult is the authority:
if the guard rewrote the streamed text, `replaced` is True and clients show `content`."""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import transaction

from core.llm import LLMInvalidOutput, call_context, chat, new_trace_id
from core.llm.types import LLMError
from core.outbox.services import outbox_enqueue
from coaching import guard, onboarding, prompts, reply_checks
from coaching.dialogue import (
    coach_replies,
    onboarding_rejections_in_row,
    sessions_missed,
    sessions_reportable,
)
from coaching.intent import REPORT, parse_intent, pick_choice
from coaching.models import Learner, Message, MessageStatus, OnboardingStep, Role, StudyArm, Turn
from coaching.router import CHECKIN, COACH, ONBOARDING, PLANNER, REFLECTION, RouteState, route
from coaching.selectors import (
    history_for,
    last_coach_turn,
    profile_get,
    session_due_for_checkin,
)
from coaching.services import (
    checkin_undo,
    context_for,
    learner_tz,
    message_mark_unanswered,
    plan_options,
    profile_apply_onboarding,
    profile_restore,
    reschedule_options,
    session_unschedule,
)
from coaching.tools import READ_TOOLS, SPECS, ToolBox

logger = logging.getLogger(__name__)

MAX_TOOL_ITERATIONS = 3
TOOL_TOKEN_BUDGET = 600  # output tokens across the tool loop; past it, go straight to the answer
REPLY_MAX_TOKENS = 96
ACK_MAX_TOKENS = 40


def tool_loop_enabled() -> bool:
    # Off by default: with the 0.5B default model every loop step costs a JSON-constrained call
    # (seconds on 2 cores) for little gain; code already performs the actions. Turn on for larger
    # models with BLOOM_COACH_TOOL_LOOP=1.
    return os.environ.get("BLOOM_COACH_TOOL_LOOP", "0").strip().lower() in ("1", "true", "yes", "on")


class ModelDown(Exception):
    """The model is unavailable for a turn that needs it. The learner message is kept (unanswered)."""

    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class TurnResult:
    reply: Message
    turn: Turn
    replaced: bool = False  # the stored content differs from what was streamed


@dataclass
class _Run:
    learner: Learner
    message: Message
    trace_id: str
    emit: Callable[[str], None] | None
    specialist: str = COACH
    streamed: list[str] = field(default_factory=list)
    guard_events: list[dict] = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    model_calls: int = 0
    iteration: int = 0
    outcome: str = "ok"
    offered_options: list = field(default_factory=list)
    # First paragraph (the model's words) of the coach's earlier replies, newest first: loop guard.
    previous_replies: list[str] = field(default_factory=list)
    model: str | None = None  # "provider:model" override (evaluation model-swap runs); None = settings
    prompt_version: str | None = None  # label of a non-default prompt (evaluation), stored on the Turn
    t0: float = field(default_factory=time.perf_counter)

    def send(self, text: str) -> None:
        self.streamed.append(text)
        if self.emit is not None:
            self.emit(text)

    def guard_event(self, kind: str, detail: str, action: str) -> None:
        self.guard_events.append({"kind": kind, "detail": detail, "action": action})


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


def _add_ms(run: _Run, phase: str, start: float) -> None:
    run.timings[phase] = round(run.timings.get(phase, 0.0) + _ms(start), 1)


# --- model calls ----------------------------------------------------------------------------------
class StreamGate:
    """Guarded streaming: tokens are held back until a whole sentence (or, without one, a window of
    WINDOW characters up to a word boundary) has passed the guard's checks; only then is it sent
    to the client. The first sentence that fails stops the stream, so nothing the guard would
    remove is ever shown. What was shown is final: a reply is never half-shown and then replaced.

    `check(text) -> list[Finding]` runs on the whole prefix released so far (flattened as the
    stored reply will be)."""

    WINDOW = 80

    def __init__(self, run: _Run, check: Callable[[str], list], *, max_sentences: int | None = None):
        self.run, self.check, self.max_sentences = run, check, max_sentences
        self.shown = ""
        self.failed: list = []  # findings of the first prefix that did not pass
        self.held = False  # stopped releasing (past the cap or formatting not prefix-stable)
        self._released_upto = 0

    def offer(self, text: str) -> bool:
        """Called with the text generated so far. False = stop generating (a check failed)."""
        if self.failed or self.held:
            return not self.failed
        ends = [m.end() for m in re.finditer(r"[.!?…](?=\s)|\n", text)]
        cut = ends[-1] if ends else 0
        if not cut and len(text) - self._released_upto >= self.WINDOW:
            cut = text.rfind(" ")
        if cut <= self._released_upto:
            return True
        return self._release(text[:cut], cut)

    def finish(self, text: str) -> None:
        """The model is done: release the rest if it passes."""
        if not self.failed and not self.held and text.strip():
            self._release(text, len(text))

    def _release(self, prefix: str, upto: int) -> bool:
        candidate, _ = guard.flatten_format(prefix)
        # A sentence ending in ":" (or a bare "1.") is held back until what follows it passes:
        # a stream stopped right after it would otherwise end on a dangling list opener.
        candidate = reply_checks.trim_dangling(candidate.strip())
        sentences = [p for p in re.split(r"(?<=[.!?])\s+|\n+", candidate) if p.strip()]
        if self.max_sentences is not None and len(sentences) > self.max_sentences:
            self.held = True
            return False
        findings = self.check(candidate)
        if findings:
            self.failed = findings
            return False
        if len(candidate) > guard.MAX_REPLY_CHARS or not candidate.startswith(self.shown):
            self.held = True  # the rest waits for the final guard
            return True
        delta = candidate[len(self.shown):]
        if delta:
            if not self.shown:
                self.run.timings["first_shown_ms"] = _ms(self.run.t0)
            self.run.send(delta)
            self.shown = candidate
        self._released_upto = upto
        return True


def _model_text(run: _Run, messages: list[dict], *, max_tokens: int, stream: bool,
                gate: StreamGate | None = None) -> str:
    """One model call under the turn's call context. With a `gate` and a client listening, tokens
    go through the gate (guarded streaming) and generation stops at the first failing sentence or
    past the hard cap; the guard then decides what is stored."""
    start = time.perf_counter()
    options = {"max_tokens": max_tokens, "temperature": 0.3, "seed": 7, "stop": prompts.STOP}
    with call_context(trace_id=run.trace_id, conversation_id=run.message.conversation_id, learner_id=run.learner.id,
                      agent=run.specialist, loop_iteration=run.iteration, service="coaching.turn"):
        run.iteration += 1
        run.model_calls += 1
        try:
            if not (stream and run.emit is not None and gate is not None):
                return chat(messages, options=options, model=run.model).text
            chat_stream = chat(messages, stream=True, options=options, model=run.model)
            parts: list[str] = []
            try:
                for token in chat_stream:
                    if not parts and "ttft_ms" not in run.timings:
                        run.timings["ttft_ms"] = _ms(run.t0)
                    parts.append(token)
                    text = "".join(parts)
                    if not gate.offer(text) or len(text) > guard.MAX_REPLY_CHARS + 80:
                        break
            finally:
                chat_stream.close()
            text = "".join(parts)
            gate.finish(text)
            return text
        finally:
            _add_ms(run, "model", start)


def _stream_checks(run: _Run, *, system: str, toolbox: ToolBox, goal_category: str,
                   extra: Callable[[str], list] | None = None,
                   messages: list[dict] | None = None) -> Callable[[str], list]:
    """The guard's checks for a prefix in the stream (the loop check waits for the whole reply)."""
    def check(text: str) -> list:
        findings = (guard.find_leaks(text, system) + guard.find_false_claims(text, toolbox.done)
                    + guard.find_drift(text, goal_category)
                    + guard.find_voice(text, run.message.content, messages=messages)
                    + guard.find_repeats(text, run.previous_replies))
        return findings + (extra(text) if extra else [])
    return check


def _streamed_reply(run: _Run, raw: str, gate: StreamGate | None, **guard_args) -> str:
    """The stored reply after a (possibly) streamed generation. If the gate showed anything, that
    is the reply (each released prefix passed the guard); a later sentence that failed is cut, not
    shown. If nothing was shown, the full guard runs (regenerate once, then the fallback)."""
    if gate is None or not gate.shown:
        return _guarded(run, raw, **guard_args)
    if gate.failed:
        run.guard_event(gate.failed[0].kind, "; ".join(f"{f.kind}:{f.detail}" for f in gate.failed)[:300],
                        "stream stopped; reply cut after the sentences already shown")
    elif gate.held:
        # Held back (over the cap or formatting changed earlier text): the guard decides the rest,
        # which is shown after the gate's text only if it extends it.
        text = _guarded(run, raw, **{**guard_args, "allow_regenerate": False})
        return text if text.startswith(gate.shown) else gate.shown
    late = guard.find_voice(gate.shown, "", run.previous_replies)  # loop: only judgeable on the whole reply
    for finding in late:
        run.guard_event(finding.kind, finding.detail, "recorded (already shown)")
    return gate.shown


def _tool_loop(run: _Run, messages: list[dict], toolbox: ToolBox) -> tuple[list[dict], str | None]:
    """Bounded ReAct loop over READ tools. Returns (messages with tool results, answer if the model
    answered directly). Tool errors go back to the model as tool results; invalid model output
    ends the loop (the caller then asks for a plain answer — a final answer is guaranteed)."""
    specs = [SPECS[name] for name in READ_TOOLS]
    used_tokens = 0
    for _ in range(MAX_TOOL_ITERATIONS):
        start = time.perf_counter()
        with call_context(trace_id=run.trace_id, conversation_id=run.message.conversation_id,
                          learner_id=run.learner.id, agent=run.specialist, loop_iteration=run.iteration,
                          service="coaching.turn"):
            run.iteration += 1
            run.model_calls += 1
            try:
                result = chat(messages, tools=specs, options={"max_tokens": 160, "temperature": 0.2, "seed": 7},
                              model=run.model)
            except LLMInvalidOutput as exc:
                run.guard_event("tool_output", str(exc)[:200], "ended tool loop")
                return messages, None
            finally:
                _add_ms(run, "model", start)
        used_tokens += result.usage.output_tokens or 0
        if not result.tool_calls:
            return messages, (result.text or None)
        messages = [*messages, {"role": "assistant", "content": "",
                                "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in result.tool_calls]}]
        start = time.perf_counter()
        for call in result.tool_calls:
            out = toolbox.call(call.name, call.arguments, by="model")
            messages.append({"role": "tool", "name": call.name, "content": _json(out)})
        _add_ms(run, "tools", start)
        if used_tokens >= TOOL_TOKEN_BUDGET:
            run.guard_event("tool_budget", f"{used_tokens} output tokens", "stopped tool loop")
            break
    else:
        run.guard_event("tool_iterations", f"{MAX_TOOL_ITERATIONS} iterations", "stopped tool loop")
    return messages, None


def _json(value) -> str:
    import json

    return json.dumps(value, default=str)[:1500]


# --- guard ----------------------------------------------------------------------------------------
def _guarded(run: _Run, text: str, *, messages: list[dict], system: str, toolbox: ToolBox,
             goal_category: str, fallback: str, allow_regenerate: bool = True, learner_text: str = "",
             goal: str = "") -> str:
    """Apply the output guard. Leak / false claim / goal drift / third person / parrot / refusal /
    loop → regenerate once (non-streamed) with a corrective note; still bad → the templated
    fallback, which is second person and about the goal (false claims: drop the sentence). Each
    finding is recorded."""
    start = time.perf_counter()
    try:
        for attempt in range(2):
            text, changed = guard.flatten_format(text)
            if changed:
                run.guard_event("format", "markdown/bullets flattened", "rewrote")
            text, cut = guard.cap_length(text)
            if cut:
                run.guard_event("too_long", f"over {guard.MAX_REPLY_CHARS} chars", "cut at sentence boundary")
            text, repeated = guard.drop_repeats(text, run.previous_replies)
            if repeated and text:
                run.guard_event("repeat", repeated[0][:80], "dropped sentence repeated from a recent reply")
            # A cut (length cap, max tokens) can leave "…some tips:\n1." at the end: trim the opener.
            dangling = reply_checks.dangling_end(text)
            text = reply_checks.trim_dangling(text) if dangling else text
            if dangling and text:
                run.guard_event("dangling", dangling, "trimmed list opener")
            findings = (guard.find_leaks(text, system) + guard.find_false_claims(text, toolbox.done)
                        + guard.find_drift(text, goal_category)
                        + guard.find_voice(text, learner_text or run.message.content, run.previous_replies,
                                           messages))
            if not text.strip():
                findings.append(guard.Finding("repeat", repeated[0][:80]) if repeated
                                else guard.Finding("dangling", dangling) if dangling
                                else guard.Finding("empty", "empty reply"))
            if not findings:
                return text
            detail = "; ".join(f"{f.kind}:{f.detail}" for f in findings)
            if attempt == 0 and allow_regenerate:
                run.guard_event(findings[0].kind, detail, "regenerate")
                note = prompts.regenerate_note(sorted({f.kind for f in findings}))
                g_start = time.perf_counter()
                try:
                    text = _model_text(run, [*messages, {"role": "system", "content": note}],
                                       max_tokens=REPLY_MAX_TOKENS, stream=False)
                except LLMError as exc:
                    run.guard_event("regenerate_failed", type(exc).__name__, "fallback")
                    text = ""
                finally:
                    run.timings["guard"] = run.timings.get("guard", 0) - _ms(g_start)  # counted as model
                continue
            if all(f.kind == "honesty" for f in findings):
                trimmed = guard.remove_sentences(text, findings, toolbox.done)
                if trimmed:
                    run.guard_event("honesty", detail, "removed false claim")
                    return trimmed
            run.guard_event(findings[0].kind, detail, "fallback")
            run.outcome = "fallback"
            return fallback
        return fallback
    finally:
        _add_ms(run, "guard", start)


# --- specialists ----------------------------------------------------------------------------------
def _chat_messages(system: str, context: str, history: list[Message], actions: str, user_text: str,
                   specialist: str = COACH) -> list[dict]:
    msgs = [{"role": "system", "content": system},
            {"role": "system", "content": prompts.notes_message(context, actions)}, *prompts.exemplar(specialist)]
    for h in history:
        msgs.append({"role": "user" if h.role == Role.LEARNER else "assistant", "content": h.content[:800]})
    msgs.append({"role": "user", "content": user_text})
    return msgs


def _actions_line(toolbox: ToolBox) -> str:
    done = [c for c in toolbox.calls if c["ok"] and c["name"] in ("schedule_session", "log_checkin")]
    if not done:
        return "This turn the app scheduled and logged nothing."
    parts = []
    for c in done:
        if c["name"] == "schedule_session":
            s = c["result"]["scheduled"]
            parts.append(f"scheduled a {s['minutes']}-minute session at {s['start'][:16].replace('T', ' ')}")
        else:
            parts.append(f"logged the session as {c['result']['outcome']}")
    return "This turn the app " + "; ".join(parts) + "."


def resolve_option(text: str, options: list[dict]) -> dict | None:
    """Which offered option the learner picked ("option B", "the second one"; "yes"/"sure" = the
    first, recommended one). Code, not the model, resolves it against the options stored on the
    previous turn."""
    index = pick_choice(text, [o["label"] for o in options])
    return options[index] if index is not None else None


def turn_run(*, message: Message, emit: Callable[[str], None] | None = None, model: str | None = None,
             base_prompt: str | None = None, prompt_version: str | None = None) -> TurnResult:
    """Run one turn for a persisted learner message (status pending/unanswered).

    `model` ("provider:model"), `base_prompt` and `prompt_version` let evaluation replay the same
    engine against another model or prompt; the version label is stored on the Turn."""
    conversation = message.conversation
    learner = conversation.learner
    run = _Run(learner=learner, message=message, trace_id=new_trace_id(), emit=emit, model=model,
               prompt_version=prompt_version if base_prompt else None)

    # 1. routing (code)
    start = time.perf_counter()
    profile = profile_get(learner=learner)
    previous = last_coach_turn(conversation=conversation, before=message)
    options_pending = bool(previous and previous.offered_options)
    options_kind = (previous.offered_options[0].get("kind", "plan") if options_pending else "plan")
    due = session_due_for_checkin(learner=learner) if profile.onboarded else None
    undoable = previous is not None and bool(_undoable_writes(previous))
    decision = route(RouteState(onboarded=profile.onboarded, checkin_due=due is not None,
                                options_pending=options_pending, options_kind=options_kind,
                                undo_specialist=previous.specialist if undoable else ""), message.content)
    run.specialist = decision.specialist
    _add_ms(run, "routing", start)

    # 2. context (code): profile line + memory block, and short-term history
    start = time.perf_counter()
    context = context_for(learner)
    history = history_for(conversation=conversation, before=message)
    earlier = coach_replies(conversation=conversation, before=message)
    run.previous_replies = [r.split("\n\n")[0] for r in earlier]
    _add_ms(run, "context", start)

    toolbox = ToolBox(learner=learner, message=message)
    tracker = learner.study_arm == StudyArm.TRACKER
    system = prompts.system_prompt(run.specialist, base=base_prompt)
    fallback = prompts.fallback_for(run.specialist, profile.primary_goal, earlier)
    suffix = ""  # code-rendered text appended after the model's words (questions, options)
    text = ""
    try:
        if decision.rule == "undo":
            text, suffix = "", _undo(run, previous, toolbox)
        elif run.specialist == ONBOARDING:
            text, suffix = _onboarding(run, profile, message, system, context, history, tracker, toolbox)
        elif run.specialist == PLANNER:
            text, suffix = _planner(run, profile, decision.rule, previous, message, system, context, history,
                                    toolbox, tracker)
        elif run.specialist == CHECKIN:
            text, suffix = _checkin(run, profile, decision, previous, message, system, context, history, toolbox,
                                    tracker, due)
        elif tracker:
            # Control arm: no coaching, ever. Templated acknowledgement, no model call.
            run.outcome, text = "templated", prompts.TRACKER_ACK
        else:
            msgs = _chat_messages(system, context, history, _actions_line(toolbox), message.content,
                                  run.specialist)
            answer = None
            gate = StreamGate(run, _stream_checks(run, system=system, toolbox=toolbox,
                                                  goal_category=profile.goal_category,
                                                  messages=msgs)) if emit else None
            if tool_loop_enabled() and run.specialist in (COACH, REFLECTION):
                msgs, answer = _tool_loop(run, msgs, toolbox)
                if answer and gate is not None:
                    gate.finish(answer)
            if answer is None:
                answer = _model_text(run, msgs, max_tokens=REPLY_MAX_TOKENS, stream=True, gate=gate)
            text = _streamed_reply(run, answer, gate, messages=msgs, system=system, toolbox=toolbox,
                                   goal_category=profile.goal_category, fallback=fallback,
                                   goal=profile.primary_goal)
    except LLMError as exc:
        # Free-form specialists need the model (down, timing out, or answering garbage): keep the
        # message (unanswered), record the turn, tell the client to retry.
        message_mark_unanswered(message=message)
        _record_turn(run, decision, context, toolbox, reply=None, outcome="unavailable")
        raise ModelDown(
            "The coach's language model is unavailable right now; your message was saved and can be "
            "retried.", retry_after=getattr(exc, "retry_after", None) or 10) from exc

    content = (text.strip() + ("\n\n" if text.strip() and suffix else "") + suffix).strip()
    streamed = "".join(run.streamed).strip()
    if emit is not None and content.startswith(streamed) and content != streamed:
        # Code-rendered parts (question, options, confirmations) follow the model's words.
        run.send(("\n\n" if streamed else "") + content[len(streamed):].lstrip())
    replaced = "".join(run.streamed).strip() != content

    start = time.perf_counter()
    reply = _persist(run, decision, context, toolbox, content)
    _add_ms(run, "persistence", start)
    run.timings["total"] = _ms(run.t0)
    Turn.objects.filter(pk=reply.produced_by_turn.pk).update(timings=run.timings)
    return TurnResult(reply=reply, turn=reply.produced_by_turn, replaced=replaced)


def _onboarding(run, profile, message, system, context, history, tracker, toolbox) -> tuple[str, str]:
    before = onboarding.OnboardingAnswers(
        step=profile.onboarding_step, primary_goal=profile.primary_goal, goal_category=profile.goal_category,
        weekly_hours=profile.weekly_hours, best_time=profile.best_time, confidence=profile.confidence)
    conversation = message.conversation
    rejected = onboarding_rejections_in_row(conversation=conversation, before=message, step=before.step)
    replies = coach_replies(conversation=conversation, before=message, limit=1)
    last_reply = replies[0] if replies else ""
    outcome = onboarding.advance(before, message.content, rejected_in_row=rejected)  # THE GATE: code only
    saved = {k: (str(v) if isinstance(v, Decimal) else v) for k, v in outcome.updates.items()}
    run.guard_events.append({"kind": "onboarding", "detail": f"{outcome.step}: "
                             + ("accepted" if outcome.accepted else f"rejected ({outcome.kind or outcome.error})"),
                             "action": "advance" if outcome.accepted else "re-ask", "updates": saved})
    if not outcome.accepted:
        run.outcome = "templated"
        return "", onboarding.reprompt(outcome, rejected, last_reply)
    previous = {k: (str(v) if isinstance(v, Decimal) else v) for k, v in before.__dict__.items()
                if k in outcome.updates}
    previous["onboarding_step"] = before.step
    profile = profile_apply_onboarding(learner=run.learner, updates=outcome.updates)
    # The write is recorded like any other code action, so audits and evaluation see what was saved.
    toolbox.calls.append({"name": "profile_update", "arguments": {k: v for k, v in saved.items()
                                                                   if k != "onboarding_step"},
                          "result": {"onboarding_step": profile.onboarding_step, "previous": previous},
                          "ok": True, "by": "code"})
    stated = " ".join([*outcome.notes, onboarding.confirmation(outcome.updates)] if not outcome.corrected
                      else outcome.notes).strip()
    if outcome.next_step == OnboardingStep.DONE:
        after = onboarding.OnboardingAnswers(
            step=profile.onboarding_step, primary_goal=profile.primary_goal, goal_category=profile.goal_category,
            weekly_hours=profile.weekly_hours, best_time=profile.best_time, confidence=profile.confidence)
        question = onboarding.completion_summary(after)
        stated = " ".join(outcome.notes)
    else:
        question = onboarding.question_for(outcome.next_step, last_reply=last_reply)
    suffix = (stated + "\n" if stated else "") + question
    ack = ""
    if not tracker:
        # The model only phrases a one-sentence acknowledgement; code states what was saved and asks.
        msgs = prompts.ack_messages(system, message.content)
        try:
            raw = _model_text(run, msgs, max_tokens=ACK_MAX_TOKENS, stream=False)
            # A bad acknowledgement (copied example, the learner's voice, …) is regenerated once;
            # still bad, the fallback is no acknowledgement: the templated confirmation stands alone.
            ack = _guarded(run, guard.cap_length(_first_sentence(raw), 200)[0], messages=msgs, system=system,
                           toolbox=ToolBox(learner=run.learner), goal_category=profile.goal_category,
                           fallback="", learner_text=message.content, goal=profile.primary_goal)
            ack = guard.cap_length(_first_sentence(ack), 200)[0] if ack else ""
            if "?" in ack:  # the question is code's job; a model question would confuse the gate
                run.guard_event("question_in_ack", ack[:80], "dropped acknowledgement")
                ack = ""
        except LLMError as exc:
            run.guard_event("model_unavailable", type(exc).__name__, "templated acknowledgement")
            ack, run.outcome = "", "templated"
    return ack, suffix


def _first_sentence(text: str) -> str:
    text = text.strip()
    match = re.search(r"^(.+?[.!?])(\s|$)", text, re.S)
    return match.group(1) if match else text


def _phrase(run, system, context, history, toolbox, user_text, fallback, goal_category, *,
            extra_check: Callable[[str], list] | None = None, max_sentences: int | None = None) -> str:
    """Model phrasing for deterministic specialists: on model failure a template answers (the
    actions were already taken by code, so the template can state them truthfully)."""
    msgs = _chat_messages(system, context, history, _actions_line(toolbox), user_text, run.specialist)
    gate = StreamGate(run, _stream_checks(run, system=system, toolbox=toolbox, goal_category=goal_category,
                                          extra=extra_check, messages=msgs),
                      max_sentences=max_sentences) if run.emit else None
    try:
        raw = _model_text(run, msgs, max_tokens=REPLY_MAX_TOKENS, stream=True, gate=gate)
    except LLMError as exc:
        run.guard_event("model_unavailable", type(exc).__name__, "templated reply")
        run.outcome = "templated"
        return fallback
    return _streamed_reply(run, raw, gate, messages=msgs, system=system, toolbox=toolbox,
                           goal_category=goal_category, fallback=fallback)


_SCHEDULE_TALK = re.compile(
    r"\d|\boption|\b(mon|tues|wednes|thurs|fri|satur|sun)day|\bmorning:|\bhere (are|is)\b", re.I)


def _schedule_talk_findings(text: str) -> list:
    """In a stream, the planner's words stop at the first piece talking schedule (see below)."""
    pieces = [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]
    bad = [p for p in pieces if _SCHEDULE_TALK.search(p) or p.endswith(":")]
    return [guard.Finding("planner_schedule_talk", bad[0][:80])] if bad else []


def _planner_words(run: _Run, text: str) -> str:
    """Code renders every day, time and option; the model's words may only frame them. A small
    model invents its own times (seen: "Morning: 8:00 AM - 9:00 AM" next to code's options), so
    any sentence or line talking schedule is dropped here, and at most two sentences are kept."""
    pieces = [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]
    kept = [p for p in pieces if not _SCHEDULE_TALK.search(p) and not p.endswith(":")][:2]
    if len(kept) != len(pieces):
        run.guard_event("planner_schedule_talk", f"dropped {len(pieces) - len(kept)} of {len(pieces)} pieces",
                        "kept framing only")
    return " ".join(kept)


UNDO_HINT = "Say “undo” if that's not right."


def _when(session) -> str:
    local = session.planned_start.astimezone(learner_tz(session.plan.learner))
    return local.strftime("%a %H:%M")


def _schedule_chosen(run, toolbox, chosen: dict) -> str:
    """Code acts on the option it offered: one schedule_session call per slot, then says what it did."""
    for s in chosen["sessions"]:
        toolbox.call("schedule_session", {"start": s["start"], "minutes": s["minutes"], "topic": s["topic"]},
                     by="code")
    ok = [c for c in toolbox.calls if c["ok"] and c["name"] == "schedule_session"]
    verb = "Moved" if chosen.get("kind") == "reschedule" else f"Option {chosen['label']} is in your plan"
    return (f"{verb}: {len(ok)} of {len(chosen['sessions'])} sessions scheduled ({chosen['summary']}). "
            "Say “undo” to take it back.")


def _planner(run, profile, rule, previous, message, system, context, history, toolbox, tracker) -> tuple[str, str]:
    if rule == "option_answer" and previous is not None:
        chosen = resolve_option(message.content, previous.offered_options)
        if chosen is not None:
            confirmation = _schedule_chosen(run, toolbox, chosen)
            if tracker:
                run.outcome = "templated"
                return "", confirmation
            text = _phrase(run, system, context, history, toolbox,
                           f"{message.content}\n(Encourage me about the sessions just scheduled.)",
                           "Nice choice — that's a plan you can keep.", profile.goal_category,
                           extra_check=_schedule_talk_findings, max_sentences=2)
            return _planner_words(run, text), confirmation
    lead = ""
    missed = sessions_missed(learner=run.learner) if rule == "reschedule_request" else []
    if missed:
        # Missed sessions lead to reschedule options, resolved by code next turn ("yes", "the second one").
        run.offered_options = reschedule_options(learner=run.learner, profile=profile, missed=missed)
        names = ", ".join(_when(s) for s in missed)
        lead = (f"You missed {len(missed)} session{'s' if len(missed) > 1 else ''} ({names}). "
                f"Here's how we could move {'them' if len(missed) > 1 else 'it'}:\n")
        reply_hint = "Reply “yes” for option A or “the second one” for option B, and I'll schedule it."
    else:
        if rule == "reschedule_request":
            lead = "I don't see a missed session in the last two weeks — here are options for the coming days:\n"
        run.offered_options = plan_options(learner=run.learner, profile=profile)
        reply_hint = "Reply “option A” or “option B” and I'll schedule it."
    listing = "\n".join(f"Option {o['label']}: {o['summary']}" for o in run.offered_options)
    suffix = f"{lead}{listing}\n{reply_hint}"
    if tracker:
        run.outcome = "templated"
        return "", suffix
    fallback = prompts.fallback_for(PLANNER, profile.primary_goal, run.previous_replies)
    text = _phrase(run, system, context, history, toolbox,
                   f"{message.content}\n(Two schedule options follow your reply; do not list times yourself.)",
                   fallback, profile.goal_category, extra_check=_schedule_talk_findings, max_sentences=2)
    return _planner_words(run, text) or fallback, suffix


def _report_targets(intent, candidates: list, learner) -> tuple[list, bool]:
    """(sessions the report is about, ambiguous?). A write needs an unambiguous reference: the one
    session that fits "today"/"yesterday"/"Tuesday's"/"both", or the only reportable session."""
    if intent.reference == "all":
        ambiguous = intent.count is not None and intent.count != len(candidates)
        return (candidates if not ambiguous else []), ambiguous or not candidates
    if not intent.reference:
        if len(candidates) <= 1:
            return candidates, False
        return [], True
    if intent.reference == "last":
        return candidates[:1], False
    tz = learner_tz(learner)
    today = datetime.now(tz).date()
    def day(s):
        return s.planned_start.astimezone(tz).date()
    if intent.reference == "today":
        fits = [s for s in candidates if day(s) == today]
    elif intent.reference == "yesterday":
        fits = [s for s in candidates if (today - day(s)).days == 1]
    else:
        fits = [s for s in candidates if day(s).weekday() == intent.weekday]
    if len(fits) == 1:
        return fits, False
    if not fits and not candidates:
        return [], False  # nothing planned: an unattached practice report
    return [], True


def _log_reports(run, toolbox, sessions: list, outcome: str) -> str:
    """log_checkin per session (or one unattached check-in), then the statement of what was written."""
    word = "done" if outcome == "completed" else "skipped"
    if not sessions:
        toolbox.call("log_checkin", {"outcome": outcome}, by="code")
        what = "a practice you did" if outcome == "completed" else "a skipped practice"
        return f"Logged: {what} (not linked to a planned session). {UNDO_HINT}"
    for session in sessions:
        toolbox.call("log_checkin", {"outcome": outcome, "session_id": session.id}, by="code")
    names = " and ".join(_when(s) for s in sessions)
    plural = "sessions" if len(sessions) > 1 else "session"
    return f"Logged: your {names} {plural} as {word}. {UNDO_HINT}"


def _checkin(run, profile, decision, previous, message, system, context, history, toolbox, tracker,
             due) -> tuple[str, str]:
    intent = parse_intent(message.content)
    sessions: list = []
    outcome = ""
    if decision.rule == "report_choice" and previous is not None:
        options = previous.offered_options
        index = pick_choice(message.content, [o["label"] for o in options], [o.get("day", "") for o in options])
        if index is None:
            run.offered_options = options
            run.outcome = "templated"
            return "", "Which one do you mean? " + " or ".join(f"{o['label']}: {o['summary']}" for o in options) + "."
        chosen = options[index]
        from coaching.models import PlannedSession

        sessions = list(PlannedSession.objects.select_related("plan__learner").filter(
            pk=chosen["session_id"], plan__learner=run.learner))
        outcome = chosen["outcome"]
    elif intent.kind == REPORT:
        candidates = sessions_reportable(learner=run.learner)
        sessions, ambiguous = _report_targets(intent, candidates, run.learner)
        outcome = intent.outcome
        if ambiguous:
            # No write on an ambiguous reference: ask which session, resolved by code next turn.
            run.offered_options = [{"label": "ABCDE"[i], "kind": "report", "session_id": s.id, "outcome": outcome,
                                    "summary": _when(s), "day": _when(s)[:3]} for i, s in enumerate(candidates[:5])]
            run.guard_event("intent", f"report ({outcome}) with no unambiguous session", "asked which")
            run.outcome = "templated"
            word = "did" if outcome == "completed" else "skipped"
            listing = " or ".join(f"{o['label']}: {o['summary']}" for o in run.offered_options)
            return "", f"Which session {word} you mean — {listing}?"
    if not outcome:
        # Check-in due but the message is not a report: ask about the session (templated question).
        when = _when(due) if due else "your last session"
        question = f"How did your session ({when}) go — did you do it or skip it?"
        if tracker:
            run.outcome = "templated"
            return "", question
        text = _phrase(run, system, context, history, toolbox, message.content, "", profile.goal_category)
        return text, question
    confirmation = _log_reports(run, toolbox, sessions, outcome)
    if outcome == "skipped":
        missed = sessions_missed(learner=run.learner)
        if missed:
            run.offered_options = reschedule_options(learner=run.learner, profile=profile, missed=missed)
            listing = "\n".join(f"Option {o['label']}: {o['summary']}" for o in run.offered_options)
            confirmation += (f"\nWant to move {'them' if len(missed) > 1 else 'it'}?\n{listing}\n"
                             "Reply “yes” for option A or “the second one” for option B.")
    if tracker:
        run.outcome = "templated"
        return "", confirmation
    text = _phrase(run, system, context, history, toolbox, message.content,
                   prompts.fallback_for(CHECKIN, profile.primary_goal, run.previous_replies),
                   profile.goal_category)
    return text, confirmation


UNDOABLE = ("log_checkin", "schedule_session", "profile_update")


def _undoable_writes(turn) -> list[dict]:
    return [c for c in turn.tool_calls or [] if c.get("ok") and c.get("by") == "code" and c.get("name") in UNDOABLE]


def _undo(run, previous, toolbox) -> str:
    """Take back every write of the previous turn (the learner said "undo" / "no, I didn't"), and
    say what was taken back. Code only: no model call."""
    run.outcome = "templated"
    said = []
    restored_step = ""
    for call in _undoable_writes(previous):
        result = call.get("result") or {}
        if call["name"] == "log_checkin" and result.get("checkin_id"):
            if checkin_undo(learner=run.learner, checkin_id=result["checkin_id"]) is not None:
                said.append("the check-in")
        elif call["name"] == "schedule_session" and result.get("scheduled"):
            if session_unschedule(learner=run.learner, session_id=result["scheduled"]["id"]):
                said.append("a scheduled session")
        elif call["name"] == "profile_update" and "previous" in result:
            profile = profile_restore(learner=run.learner, values=result["previous"])
            restored_step = profile.onboarding_step
            said.append("your last answer")
    toolbox.calls.append({"name": "undo", "arguments": {"trace_id": previous.trace_id}, "result": {"undone": said},
                          "ok": True, "by": "code"})
    if not said:
        return "There was nothing left to undo."
    parts = []
    for item, one, many in (("the check-in", "the check-in", "{n} check-ins"),
                            ("a scheduled session", "the scheduled session", "{n} scheduled sessions"),
                            ("your last answer", "your last answer", "your last answer")):
        n = said.count(item)
        if n:
            parts.append(one if n == 1 else many.format(n=n))
    what = " and ".join(parts)
    text = f"Undone: I took back {what}."
    if restored_step and restored_step != OnboardingStep.DONE:
        text += " " + onboarding.QUESTIONS[restored_step]
    elif "the check-in" in said:
        text += " Tell me how it really went whenever you like."
    return text


# --- persistence ----------------------------------------------------------------------------------
def _record_turn(run: _Run, decision, context: str, toolbox: ToolBox, *, reply: Message | None, outcome: str) -> Turn:
    turn, _ = Turn.objects.update_or_create(
        learner_message=run.message,
        defaults={"reply": reply, "specialist": decision.specialist, "rule": decision.rule,
                  "reason": decision.reason[:300], "trace_id": run.trace_id,
                  "prompt_version": run.prompt_version or prompts.PROMPT_VERSION,
                  "context_snapshot": context, "guard_events": run.guard_events, "tool_calls": toolbox.calls,
                  "offered_options": run.offered_options, "timings": run.timings, "model_calls": run.model_calls,
                  "outcome": outcome},
    )
    return turn


def _persist(run: _Run, decision, context: str, toolbox: ToolBox, content: str) -> Message:
    """Store the reply exactly once: under a row lock on the learner message, a second runner for
    the same message (a retried request) finds the reply and stores nothing."""
    with transaction.atomic():
        locked = Message.objects.select_for_update().get(pk=run.message.pk)
        existing = locked.replies.filter(role=Role.COACH).order_by("id").first()
        if existing is not None:
            return existing
        reply = Message.objects.create(conversation_id=locked.conversation_id, role=Role.COACH, content=content,
                                       specialist=decision.specialist, reply_to=locked, trace_id=run.trace_id)
        Message.objects.filter(pk=locked.pk).update(status=MessageStatus.ANSWERED, specialist=decision.specialist,
                                                    trace_id=run.trace_id)
        run.message.status = MessageStatus.ANSWERED
        _record_turn(run, decision, context, toolbox, reply=reply, outcome=run.outcome)
        if (decision.specialist != ONBOARDING and run.learner.study_arm == StudyArm.COACH
                and settings.BLOOM_MEMORY_EXTRACTION):
            # Fire-and-forget memory extraction, sent after commit; the reply never waits for it.
            outbox_enqueue(task_name="memory.extract_facts", args=[locked.pk], queue="memory",
                           dedup_key=f"extract:{locked.pk}")
    return reply


def now_iso() -> str:
    return datetime.now().isoformat()
