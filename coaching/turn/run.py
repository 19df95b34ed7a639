"""The turn, stage by stage: read (once) → route (rules) → act (code) → say (model) → guard → persist.
Each stage takes what the one before produced, carried on the `Run`; see the package docstring for
who decides what."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from coaching.models import Message, OnboardingStep, StudyArm, Turn
from coaching.onboarding import OnboardingAnswers
from coaching.selectors import history_for, last_coach_turn, profile_get, session_due_for_checkin, sessions_in_view
from coaching.services import context_for, learner_tz, message_mark_unanswered
from coaching.turn import prompts
from coaching.turn.checkin import checkin_turn
from coaching.turn.dialogue import coach_replies, learner_texts, onboarding_rejections_in_row
from coaching.turn.goal_change import (
    category_change_turn,
    change_offer,
    confidence_change_turn,
    goal_change_turn,
    hours_change_turn,
    offered_change_turn,
    time_change_turn,
)
from coaching.turn.model import StreamGate, model_text, turn_context
from coaching.turn.onboarding import onboarding_turn
from coaching.turn.persistence import persist, record_turn
from coaching.turn.phrasing import actions_line, chat_messages
from coaching.turn.planner import planner_turn
from coaching.turn.reading.reader import read
from coaching.turn.reading.rules import session_refs
from coaching.turn.reading.types import ReadContext
from coaching.turn.reply import stream_checks, streamed_reply
from coaching.turn.router import CHECKIN, COACH, ONBOARDING, PLANNER, REFLECTION, RouteState, route
from coaching.turn.state import REPLY_MAX_TOKENS, ModelDown, Run, TurnResult, add_ms, ms
from coaching.turn.strategy import fallback_reply, strategy_for
from coaching.turn.tool_loop import tool_loop
from coaching.turn.tools import ToolBox
from coaching.turn.undo import undo_turn, undoable_writes
from core.llm import new_trace_id
from core.llm.types import LLMError


def read_context(run: Run) -> ReadContext:
    """What the message is read against: the question or options pending, the plan around today,
    the learner's earlier messages."""
    profile, previous, message = run.profile, run.previous, run.message
    tz = learner_tz(run.learner)
    now = timezone.now()
    options = tuple(previous.offered_options) if previous and previous.offered_options else ()
    step = profile.onboarding_step if not profile.onboarded else OnboardingStep.DONE
    answers = OnboardingAnswers(step=profile.onboarding_step, primary_goal=profile.primary_goal,
                                goal_category=profile.goal_category, weekly_hours=profile.weekly_hours,
                                best_time=profile.best_time, confidence=profile.confidence)
    return ReadContext(
        step=step, goal=profile.primary_goal, answers=answers,
        pending_kind=(options[0].get("kind", "plan") if options else ""), options=options,
        plan=session_refs(sessions_in_view(learner=run.learner, now=now), tz=tz, now=now),
        earlier=tuple(learner_texts(conversation=message.conversation, before=message)),
        today=datetime.now(tz).date(),
        rejected_in_row=(onboarding_rejections_in_row(conversation=message.conversation, before=message,
                                                      step=profile.onboarding_step) if step != OnboardingStep.DONE
                         else 0),
        undoable=previous is not None and bool(undoable_writes(previous)),
        asked=_asked(previous) if step == OnboardingStep.DONE and not options else "")


def _asked(previous) -> str:
    """The question code's words in the previous reply ended on (its last line, when it asks)."""
    lines = (previous.code_text or "").strip().splitlines() if previous is not None else []
    return lines[-1].strip()[:200] if lines and lines[-1].rstrip().endswith("?") else ""


def turn_run(*, message: Message, emit: Callable[[str], None] | None = None, model: str | None = None,
             base_prompt: str | None = None, prompt_version: str | None = None) -> TurnResult:
    """Run one turn for a persisted learner message (status pending/unanswered).

    `model` ("provider:model"), `base_prompt` and `prompt_version` let evaluation replay the same
    engine against another model or prompt; the version label is stored on the Turn."""
    conversation = message.conversation
    learner = conversation.learner
    run = Run(learner=learner, message=message, trace_id=new_trace_id(), emit=emit, model=model,
              prompt_version=prompt_version if base_prompt else None)
    run.profile = profile = profile_get(learner=learner)
    run.known_goal = profile.primary_goal if profile.onboarding_step == OnboardingStep.DONE else ""
    run.previous = previous = last_coach_turn(conversation=conversation, before=message)

    # 1. read (once): the act and its values, each pointing at the learner's words
    start = time.perf_counter()
    with turn_context(run):
        run.reading = read(message.content, read_context(run))
    if run.reading.model_ms:
        run.model_calls += 1  # the reader's proposal is one of the turn's model calls (a telemetry row)
    add_ms(run, "reading", start)

    # 2. route (rules over the reading)
    start = time.perf_counter()
    options_pending = bool(previous and previous.offered_options)
    run.due = due = session_due_for_checkin(learner=learner) if profile.onboarded else None
    undoable = previous is not None and bool(undoable_writes(previous))
    run.decision = decision = route(RouteState(
        onboarded=profile.onboarded, checkin_due=due is not None, options_pending=options_pending,
        options_kind=(previous.offered_options[0].get("kind", "plan") if options_pending else "plan"),
        undo_specialist=previous.specialist if undoable else ""), run.reading)
    run.specialist = decision.specialist
    add_ms(run, "routing", start)

    # 3. context (code): profile line + memory block, and short-term history
    start = time.perf_counter()
    run.context = context = context_for(learner)
    run.history = history_for(conversation=conversation, before=message)
    earlier = coach_replies(conversation=conversation, before=message)
    run.previous_replies = [r.split("\n\n")[0] for r in earlier]
    add_ms(run, "context", start)

    run.toolbox = toolbox = ToolBox(learner=learner, message=message)
    run.tracker = tracker = learner.study_arm == StudyArm.TRACKER
    # The coach and reflection replies follow a strategy code chose for the act (strategy.py).
    free_form = run.specialist in (COACH, REFLECTION)
    strategy = strategy_for(run.reading)
    run.system = system = prompts.system_prompt(run.specialist, base=base_prompt,
                                                strategy=strategy.instruction if free_form else "")
    fallback = (fallback_reply(strategy, learner_text=message.content, goal=profile.primary_goal) if free_form
                else prompts.fallback_for(run.specialist, profile.primary_goal, earlier))
    suffix = ""  # code-rendered text appended after the model's words (questions, options)
    text = ""
    try:
        # 4. act (code) and 5. say (model), by the specialist the router chose
        if decision.rule == "undo":
            text, suffix = "", undo_turn(run, previous, toolbox)
        elif decision.rule == "goal_change":
            text, suffix = "", goal_change_turn(run)
        elif decision.rule == "time_change":
            text, suffix = "", time_change_turn(run)
        elif decision.rule == "hours_change":
            text, suffix = "", hours_change_turn(run)
        elif decision.rule == "confidence_change":
            text, suffix = "", confidence_change_turn(run)
        elif decision.rule == "category_change":
            text, suffix = "", category_change_turn(run)
        elif decision.rule == "change_choice":
            text, suffix = "", offered_change_turn(run)
        elif run.specialist == ONBOARDING:
            text, suffix = onboarding_turn(run)
        elif run.specialist == PLANNER:
            text, suffix = planner_turn(run)
        elif run.specialist == CHECKIN:
            text, suffix = checkin_turn(run)
        elif tracker:
            # Control arm: no coaching, ever. Templated acknowledgement, no model call.
            run.outcome, text = "templated", prompts.TRACKER_ACK
        elif strategy.name == "undo":
            # "undo" when the last reply wrote nothing: a fact code knows, said in code's words (the
            # model, asked to say it, claimed "I've taken the session back").
            run.outcome, text = "templated", fallback_reply(strategy, learner_text=message.content,
                                                            goal=profile.primary_goal)
        else:
            msgs = chat_messages(system, context, run.history, actions_line(toolbox), message.content,
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
            # 6. guard
            text = streamed_reply(run, answer, gate, messages=msgs, system=system, toolbox=toolbox,
                                  goal_category=profile.goal_category, fallback=fallback,
                                  goal=profile.primary_goal, check_dodge=True)
            # A change the learner weighs aloud ("maybe I should lower it to 3 hours?") is offered by
            # code after the model's words, and written only on a yes.
            suffix = change_offer(run)
            if suffix and run.outcome == "fallback":
                # The model's words did not pass the guard: the offer, in code's words, is the answer;
                # a stock line in front of it ("I couldn't put together a good answer…") only gets in its way.
                text = ""
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
