"""The onboarding specialist: the gate (coaching/onboarding/, code only) decides whether the
answer advances and what is saved; code states what was saved and asks the next question. With
BLOOM_ONBOARDING_MODEL_ACK the model adds a one-sentence acknowledgement in front; nothing else."""

from __future__ import annotations

import re
from decimal import Decimal

from django.conf import settings

from coaching import onboarding
from coaching.models import OnboardingStep
from coaching.services import profile_apply_onboarding
from coaching.turn import guard, prompts
from coaching.turn.dialogue import coach_replies, onboarding_rejections_in_row
from coaching.turn.model import model_text
from coaching.turn.reading.plan_request import days_phrase
from coaching.turn.reading.types import CANCEL, CHANGE, MOVE, OTHER, PLAN, QUESTION, REPORT, SMALL_TALK
from coaching.turn.reading.vocabulary import DAY_CODES
from coaching.turn.reply import guarded
from coaching.turn.state import ACK_MAX_TOKENS, Run
from coaching.turn.tools import ToolBox
from core.llm.types import LLMError

_REJECTION_OF_ACT = {SMALL_TALK: "filler", QUESTION: "question", OTHER: "off_topic", PLAN: "plan_request",
                     MOVE: "plan_request", CANCEL: "plan_request", REPORT: "off_topic"}


def _gate_outcome(run: Run, before: onboarding.OnboardingAnswers) -> onboarding.StepOutcome:
    """What the gate does with the reading: the rules' own gate outcome when the rules read the
    message, the settled values when a model's proposal did, a re-ask naming the act otherwise.
    Nothing here reads the message text."""
    reading = run.reading
    gate = reading.gate
    values = {slot: reading.get(slot) for slot in ("goal", "category", "weekly_hours", "time_of_day", "confidence")
              if reading.has(slot)}
    offered = {o["label"]: o for o in (run.previous.offered_options if run.previous else []) if o.get("kind") == "goal"}
    if before.step == OnboardingStep.GOAL and reading.get("option") in offered:
        # "yes" to the goal the coach said it understood from a message in another language.
        return onboarding.apply_values(before, {"goal": offered[reading.get("option")]["goal"]})
    if reading.act == PLAN and before.step == OnboardingStep.BEST_TIME and reading.has("time_of_day"):
        # "Schedule a 30 minute practice on Thursday evening" at the best-time question asks for the
        # plan early and answers the question: the answer is kept (the plan follows onboarding).
        return onboarding.apply_values(before, {"time_of_day": reading.get("time_of_day")})
    if reading.source != "rules" and values:
        # A settled proposal that carries answers ("1-2 hrs a week" at the goal question) is an
        # answer, whatever act the model named.
        return onboarding.apply_values(before, values, corrected=reading.act == CHANGE)
    if reading.act in _REJECTION_OF_ACT and not (gate is not None and reading.source == "rules"
                                                 and reading.act != PLAN):
        kind = _REJECTION_OF_ACT[reading.act]
        if kind == "filler" and gate is not None and gate.kind == "greeting":
            kind = "greeting"
        return onboarding.StepOutcome(accepted=False, step=before.step, next_step=before.step, error=kind, kind=kind)
    if reading.source == "rules" and gate is not None:
        if reading.settled or not gate.accepted:
            return gate
        # The rules took a goal they cannot stand behind and no proposal backed it: asked, not stored.
        return onboarding.StepOutcome(accepted=False, step=before.step, next_step=before.step, error="unsure",
                                      kind="unsure")
    if not values and gate is not None:
        return gate
    return onboarding.apply_values(before, values, corrected=reading.act == CHANGE)


def onboarding_turn(run: Run) -> tuple[str, str]:
    profile, message, toolbox = run.profile, run.message, run.toolbox
    before = onboarding.OnboardingAnswers(
        step=profile.onboarding_step, primary_goal=profile.primary_goal, goal_category=profile.goal_category,
        weekly_hours=profile.weekly_hours, best_time=profile.best_time, confidence=profile.confidence)
    conversation = message.conversation
    rejected = onboarding_rejections_in_row(conversation=conversation, before=message, step=before.step)
    replies = coach_replies(conversation=conversation, before=message, limit=1)
    last_reply = replies[0] if replies else ""
    outcome = _gate_outcome(run, before)  # THE GATE: code only
    saved = {k: (str(v) if isinstance(v, Decimal) else v) for k, v in outcome.updates.items()}
    run.guard_events.append({"kind": "onboarding", "detail": f"{outcome.step}: "
                             + ("accepted" if outcome.accepted else f"rejected ({outcome.kind or outcome.error})"),
                             "action": "advance" if outcome.accepted else "re-ask", "updates": saved})
    # Days said during onboarding ("weekends only, I work late on weekdays") are no profile field:
    # said back as kept; the planner finds them again in the learner's earlier messages.
    days = run.reading.get("days") if outcome.step != OnboardingStep.GOAL else None
    only = bool(run.reading.get("days_ruled_out"))
    kept = (f"I'll keep “{days_phrase(frozenset(DAY_CODES.index(d) for d in days), only=only)}” for your plan. "
            if days else "")
    if not outcome.accepted:
        run.outcome = "templated"
        doubted = run.reading.get("goal") if outcome.kind == "unsure" else None
        gloss = run.reading.get("gloss") or (onboarding.goal_from_its_verb(doubted) if doubted else None)
        if before.step == OnboardingStep.GOAL and gloss:
            # A goal understood in another language, or in words the rules could not stand behind
            # and no proposal backed: said back, stored only once the learner says it is right.
            run.offered_options = [{"label": "A", "kind": "goal", "goal": gloss, "summary": gloss}]
            lang = run.reading.get("lang")
            read_in = "I read your message in another language and answer in English. " if lang and lang != "en" else ""
            return "", (f"{read_in}I understood your goal as “{gloss}”. Is that right? Say “yes” to keep it, "
                        f"or tell me your goal in a few words.")
        return "", kept + onboarding.reprompt(outcome, rejected, last_reply)
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
    lang = run.reading.get("lang")
    # Read in another language, answered in the coach's: what was understood is said first.
    other_language = "I read your message in another language and answer in English. " if lang and lang != "en" else ""
    stated = (other_language + kept + stated).strip()
    suffix = (stated + "\n" if stated else "") + question
    ack = ""
    tracker, system = run.tracker, run.system
    if not tracker and settings.BLOOM_ONBOARDING_MODEL_ACK:
        # The model only phrases a one-sentence acknowledgement; code states what was saved and asks.
        msgs = prompts.ack_messages(system, message.content)
        try:
            raw = model_text(run, msgs, max_tokens=ACK_MAX_TOKENS, stream=False)
            # A bad acknowledgement (copied example, the learner's voice, …) is regenerated once;
            # still bad, the fallback is no acknowledgement: the templated confirmation stands alone.
            ack = guarded(run, guard.cap_length(_first_sentence(raw), 200)[0], messages=msgs, system=system,
                          toolbox=ToolBox(learner=run.learner), goal_category=profile.goal_category,
                          fallback="", learner_text=message.content, goal=profile.primary_goal)
            ack = guard.cap_length(_first_sentence(ack), 200)[0] if ack else ""
            if "?" in ack:  # the question is code's job; a model question would confuse the gate
                run.guard_event("question_in_ack", ack[:80], "dropped acknowledgement")
                ack = ""
        except LLMError as exc:
            run.guard_event("model_unavailable", type(exc).__name__, "templated acknowledgement")
            ack, run.outcome = "", "templated"
    elif not tracker:
        run.outcome = "templated"  # the whole reply is the gate's code-written text
    return ack, suffix


def _first_sentence(text: str) -> str:
    text = text.strip()
    match = re.search(r"^(.+?[.!?])(\s|$)", text, re.S)
    return match.group(1) if match else text
