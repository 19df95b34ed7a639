"""What the specialists share: the chat messages of a model call (system prompt, notes with the
context block and the actions line, exemplar, history), model phrasing with a templated fallback,
and how a session's time is said."""

from __future__ import annotations

from collections.abc import Callable

from coaching.models import Message, Role
from coaching.services import learner_tz
from coaching.turn import prompts
from coaching.turn.model import StreamGate, model_text
from coaching.turn.reply import stream_checks, streamed_reply
from coaching.turn.router import COACH
from coaching.turn.state import REPLY_MAX_TOKENS, Run
from coaching.turn.tools import ToolBox
from core.llm.types import LLMError


def chat_messages(system: str, context: str, history: list[Message], actions: str, user_text: str,
                  specialist: str = COACH) -> list[dict]:
    # One system message: with the notes as a second one right before the learner's message (and
    # no exemplar between), the 0.5B model answered by reciting the notes (9 of 79 raw replies).
    msgs = [{"role": "system", "content": f"{system}\n\n{prompts.notes_message(context, actions)}"},
            *prompts.exemplar(specialist)]
    for h in history:
        msgs.append({"role": "user" if h.role == Role.LEARNER else "assistant", "content": h.content[:800]})
    msgs.append({"role": "user", "content": user_text})
    return msgs


def actions_line(toolbox: ToolBox) -> str:
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


def phrase(run: Run, system, context, history, toolbox, user_text, fallback, goal_category, *,
           extra_check: Callable[[str], list] | None = None, max_sentences: int | None = None) -> str:
    """Model phrasing for deterministic specialists: on model failure a template answers (the
    actions were already taken by code, so the template can state them truthfully)."""
    msgs = chat_messages(system, context, history, actions_line(toolbox), user_text, run.specialist)
    gate = StreamGate(run, stream_checks(run, system=system, toolbox=toolbox, goal_category=goal_category,
                                         extra=extra_check, messages=msgs),
                      max_sentences=max_sentences) if run.emit else None
    try:
        raw = model_text(run, msgs, max_tokens=REPLY_MAX_TOKENS, stream=True, gate=gate)
    except LLMError as exc:
        run.guard_event("model_unavailable", type(exc).__name__, "templated reply")
        run.outcome = "templated"
        return fallback
    return streamed_reply(run, raw, gate, messages=msgs, system=system, toolbox=toolbox,
                          goal_category=goal_category, fallback=fallback)


def when(session) -> str:
    """A session's start as the learner reads it ("Tue 18:00", in their time zone)."""
    local = session.planned_start.astimezone(learner_tz(session.plan.learner))
    return local.strftime("%a %H:%M")
