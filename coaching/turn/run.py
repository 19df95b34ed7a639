"""The turn, step by step: route (code), gather context (code), run the specialist, append what
code rendered after the model's words, store once. See the package docstring for who decides what."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings

from coaching import prompts
from coaching.dialogue import coach_replies
from coaching.models import Message, OnboardingStep, StudyArm, Turn
from coaching.router import CHECKIN, COACH, ONBOARDING, PLANNER, REFLECTION, RouteState, route
from coaching.selectors import history_for, last_coach_turn, profile_get, session_due_for_checkin
from coaching.services import context_for, message_mark_unanswered
from coaching.tools import ToolBox
from coaching.turn.checkin import checkin_turn
from coaching.turn.goal_change import goal_change_turn, time_change_turn
from coaching.turn.model import StreamGate, model_text
from coaching.turn.onboarding import onboarding_turn
from coaching.turn.persistence import persist, record_turn
from coaching.turn.phrasing import actions_line, chat_messages
from coaching.turn.planner import planner_turn
from coaching.turn.reply import stream_checks, streamed_reply
from coaching.turn.state import REPLY_MAX_TOKENS, ModelDown, Run, TurnResult, add_ms, ms
from coaching.turn.tool_loop import tool_loop
from coaching.turn.undo import undo_turn, undoable_writes
from core.llm import new_trace_id
from core.llm.types import LLMError


def turn_run(*, message: Message, emit: Callable[[str], None] | None = None, model: str | None = None,
             base_prompt: str | None = None, prompt_version: str | None = None) -> TurnResult:
    """Run one turn for a persisted learner message (status pending/unanswered).

    `model` ("provider:model"), `base_prompt` and `prompt_version` let evaluation replay the same
    engine against another model or prompt; the version label is stored on the Turn."""
    conversation = message.conversation
    learner = conversation.learner
    run = Run(learner=learner, message=message, trace_id=new_trace_id(), emit=emit, model=model,
              prompt_version=prompt_version if base_prompt else None)

    # 1. routing (code)
    start = time.perf_counter()
    profile = profile_get(learner=learner)
    run.known_goal = profile.primary_goal if profile.onboarding_step == OnboardingStep.DONE else ""
    previous = last_coach_turn(conversation=conversation, before=message)
    options_pending = bool(previous and previous.offered_options)
    options_kind = (previous.offered_options[0].get("kind", "plan") if options_pending else "plan")
    due = session_due_for_checkin(learner=learner) if profile.onboarded else None
    undoable = previous is not None and bool(undoable_writes(previous))
    decision = route(RouteState(onboarded=profile.onboarded, checkin_due=due is not None,
                                options_pending=options_pending, options_kind=options_kind,
                                undo_specialist=previous.specialist if undoable else ""), message.content)
    run.specialist = decision.specialist
    add_ms(run, "routing", start)

    # 2. context (code): profile line + memory block, and short-term history
    start = time.perf_counter()
    context = context_for(learner)
    history = history_for(conversation=conversation, before=message)
    earlier = coach_replies(conversation=conversation, before=message)
    run.previous_replies = [r.split("\n\n")[0] for r in earlier]
    add_ms(run, "context", start)

    toolbox = ToolBox(learner=learner, message=message)
    tracker = learner.study_arm == StudyArm.TRACKER
    system = prompts.system_prompt(run.specialist, base=base_prompt)
    fallback = prompts.fallback_for(run.specialist, profile.primary_goal, earlier)
    suffix = ""  # code-rendered text appended after the model's words (questions, options)
    text = ""
    try:
        if decision.rule == "undo":
            text, suffix = "", undo_turn(run, previous, toolbox)
        elif decision.rule == "goal_change":
            text, suffix = "", goal_change_turn(run, profile, decision.goal, toolbox)
        elif decision.rule == "time_change":
            text, suffix = "", time_change_turn(run, profile, decision.best_time, toolbox)
        elif run.specialist == ONBOARDING:
            text, suffix = onboarding_turn(run, profile, message, system, context, history, tracker, toolbox)
        elif run.specialist == PLANNER:
            text, suffix = planner_turn(run, profile, decision.rule, previous, message, system, context, history,
                                        toolbox, tracker)
        elif run.specialist == CHECKIN:
            text, suffix = checkin_turn(run, profile, decision, previous, message, system, context, history,
                                        toolbox, tracker, due)
        elif tracker:
            # Control arm: no coaching, ever. Templated acknowledgement, no model call.
            run.outcome, text = "templated", prompts.TRACKER_ACK
        else:
            msgs = chat_messages(system, context, history, actions_line(toolbox), message.content,
                                 run.specialist)
            answer = None
            gate = StreamGate(run, stream_checks(run, system=system, toolbox=toolbox,
                                                 goal_category=profile.goal_category,
                                                 messages=msgs)) if emit else None
            if settings.BLOOM_COACH_TOOL_LOOP and run.specialist in (COACH, REFLECTION):
                msgs, answer = tool_loop(run, msgs, toolbox)
                if answer and gate is not None:
                    gate.finish(answer)
            if answer is None:
                answer = model_text(run, msgs, max_tokens=REPLY_MAX_TOKENS, stream=True, gate=gate)
            text = streamed_reply(run, answer, gate, messages=msgs, system=system, toolbox=toolbox,
                                  goal_category=profile.goal_category, fallback=fallback,
                                  goal=profile.primary_goal)
    except LLMError as exc:
        # Free-form specialists need the model (down, timing out, or answering garbage): keep the
        # message (unanswered), record the turn, tell the client to retry.
        message_mark_unanswered(message=message)
        record_turn(run, decision, context, toolbox, reply=None, outcome="unavailable")
        raise ModelDown(
            "The coach's language model is unavailable right now; your message was saved and can be "
            "retried.", retry_after=getattr(exc, "retry_after", None) or 10) from exc

    content = (text.strip() + ("\n\n" if text.strip() and suffix else "") + suffix).strip()
    # No model words, a fallback or a template: the whole reply is code's text.
    whole = not text.strip() or run.outcome in ("fallback", "templated")
    run.code_text = content if whole else suffix.strip()
    streamed = "".join(run.streamed).strip()
    if emit is not None and content.startswith(streamed) and content != streamed:
        # Code-rendered parts (question, options, confirmations) follow the model's words.
        run.send(("\n\n" if streamed else "") + content[len(streamed):].lstrip())
    replaced = "".join(run.streamed).strip() != content

    start = time.perf_counter()
    reply = persist(run, decision, context, toolbox, content)
    add_ms(run, "persistence", start)
    run.timings["total"] = ms(run.t0)
    Turn.objects.filter(pk=reply.produced_by_turn.pk).update(timings=run.timings)
    return TurnResult(reply=reply, turn=reply.produced_by_turn, replaced=replaced)
