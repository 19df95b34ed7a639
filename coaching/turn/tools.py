"""Tools of the coach, all bound to ONE learner (the one whose turn is running): a tool can never
reach another learner's data because it never receives a learner id from the model.

Every call — whether code made it (deterministic part of a specialist) or the model asked for it
(tool loop) — goes through `ToolBox.call`, which records name, arguments, result and who asked.
The honesty guard reads `ToolBox.done` to check the reply's claims."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from coaching.models import Learner, Message, PlannedSession
from coaching.selectors import profile_get, progress_for, sessions_upcoming
from coaching.services import (
    checkin_log,
    profile_line,
    session_cancel,
    session_makeup_apply,
    session_move,
    session_schedule,
)
from core.errors import ApplicationError
from core.llm import ToolSpec
from memory.rules import neutralise
from memory.selectors import search_memory

logger = logging.getLogger(__name__)

SPECS: dict[str, ToolSpec] = {
    "get_profile": ToolSpec("get_profile", "The learner's goal, weekly hours, best time, confidence.",
                            {"type": "object", "properties": {}}),
    "get_plan": ToolSpec("get_plan", "The learner's upcoming planned sessions.", {"type": "object", "properties": {}}),
    "get_progress": ToolSpec("get_progress", "Counts of completed, skipped and missed sessions.",
                             {"type": "object", "properties": {}}),
    "search_memory": ToolSpec("search_memory", "Search what the learner said in earlier conversations.",
                              {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    "schedule_session": ToolSpec(
        "schedule_session", "Schedule one study session.",
        {"type": "object", "properties": {"start": {"type": "string", "description": "ISO 8601 date-time"},
                                          "minutes": {"type": "integer"}, "topic": {"type": "string"}},
         "required": ["start", "minutes"]}),
    "move_session": ToolSpec(
        "move_session", "Move one planned session to a new start.",
        {"type": "object", "properties": {"session_id": {"type": "integer"},
                                          "start": {"type": "string", "description": "ISO 8601 date-time"}},
         "required": ["session_id", "start"]}),
    "apply_makeup": ToolSpec(
        "apply_makeup", "Put make-up sessions in place of the sessions an option replaces.",
        {"type": "object", "properties": {"option": {"type": "object"}}, "required": ["option"]}),
    "cancel_session": ToolSpec(
        "cancel_session", "Cancel one planned session.",
        {"type": "object", "properties": {"session_id": {"type": "integer"}}, "required": ["session_id"]}),
    "log_checkin": ToolSpec(
        "log_checkin", "Record that the learner completed or skipped a session.",
        {"type": "object", "properties": {"outcome": {"type": "string", "enum": ["completed", "skipped"]},
                                          "session_id": {"type": "integer"}}, "required": ["outcome"]}),
}
# Read-only tools the model may call in the tool loop. Actions (schedule, log) are taken by code
# from parsed learner input: the 0.5B model is unreliable at choosing them.
READ_TOOLS = ["get_profile", "get_plan", "get_progress", "search_memory"]
ACTION_TOOLS = {"schedule_session", "move_session", "cancel_session", "apply_makeup", "log_checkin", "profile_update"}


def _session_json(session: PlannedSession) -> dict:
    return {"id": session.id, "start": session.planned_start.isoformat(), "minutes": session.duration_minutes,
            "topic": session.topic, "status": session.status}


def _as_data(row: Any) -> Any:
    """A memory hit as a tool result: its stored text made inert like the memory block's (role
    tags, template tokens and fences removed), so a stored fact cannot pose as a chat turn when
    the model reads it back through the tool loop."""
    if isinstance(row, dict):
        return {**row, "content": neutralise(str(row["content"]))} if "content" in row else row
    return neutralise(row if isinstance(row, str) else str(row))


class ToolBox:
    def __init__(self, *, learner: Learner, message: Message | None = None):
        self.learner = learner
        self.message = message
        self.calls: list[dict[str, Any]] = []

    @property
    def done(self) -> set[str]:
        """What the reply may truthfully claim: action tools that succeeded this turn, plus
        "calendar" only when the learner's ICS feed exists AND they confirmed subscribing to it
        (tracked state in coaching.research, never assumed)."""
        done = {c["name"] for c in self.calls if c["ok"] and c["name"] in ACTION_TOOLS}
        if self._calendar_confirmed():
            done.add("calendar")
        return done

    def _calendar_confirmed(self) -> bool:
        if not hasattr(self, "_calendar_state"):
            from coaching.research.selectors import calendar_subscription_confirmed

            self._calendar_state = calendar_subscription_confirmed(self.learner.pk)
        return self._calendar_state

    def call(self, name: str, arguments: dict[str, Any], *, by: str) -> dict[str, Any]:
        """Run a tool. Errors come back as a result ({"error": ...}), never as an exception, so
        the model (or code) can see what went wrong and answer honestly."""
        try:
            handler = getattr(self, f"_t_{name}")
        except AttributeError:
            result, ok = {"error": f"unknown tool {name!r}"}, False
        else:
            try:
                result, ok = handler(**(arguments or {})), True
            except ApplicationError as exc:
                result, ok = {"error": str(exc), "code": exc.code}, False
            except (TypeError, ValueError) as exc:
                result, ok = {"error": f"bad arguments: {exc}"}, False
        self.calls.append({"name": name, "arguments": arguments, "result": result, "ok": ok, "by": by})
        return result

    # --- tools -------------------------------------------------------------------------------
    def _t_get_profile(self) -> dict:
        return {"profile": profile_line(profile_get(learner=self.learner))}

    def _t_get_plan(self) -> dict:
        return {"sessions": [_session_json(s) for s in sessions_upcoming(learner=self.learner)]}

    def _t_get_progress(self) -> dict:
        return progress_for(learner=self.learner)

    def _t_search_memory(self, query: str, limit: int = 5) -> dict:
        try:
            rows = search_memory(learner_id=self.learner.id, query=str(query)[:200], limit=min(int(limit), 10))
        except Exception as exc:  # memory errors become a tool result, not a failed turn
            logger.exception("search_memory failed")
            return {"error": f"memory search failed: {type(exc).__name__}"}
        return {"results": [_as_data(r) for r in rows]}

    def _t_schedule_session(self, start: str, minutes: int, topic: str = "") -> dict:
        when = datetime.fromisoformat(str(start))
        session = session_schedule(learner=self.learner, start=when, duration_minutes=int(minutes), topic=topic)
        return {"scheduled": _session_json(session)}

    def _own_session(self, session_id: int) -> PlannedSession:
        session = (PlannedSession.objects.select_related("plan")
                   .filter(pk=session_id, plan__learner=self.learner).first())
        if session is None:
            raise ApplicationError(f"no session {session_id} for this learner", field="session_id")
        return session

    def _t_move_session(self, session_id: int, start: str) -> dict:
        session = self._own_session(session_id)
        previous = _session_json(session)
        moved = session_move(session=session, start=datetime.fromisoformat(str(start)),
                             reason="the learner asked in chat")
        return {"moved": _session_json(moved), "previous": previous}

    def _t_apply_makeup(self, option: dict) -> dict:
        sessions = session_makeup_apply(learner=self.learner, option=option, reason="the learner chose a make-up")
        return {"scheduled": [_session_json(s) for s in sessions], "replaces": list(option.get("replaces") or [])}

    def _t_cancel_session(self, session_id: int) -> dict:
        session = self._own_session(session_id)
        cancelled = _session_json(session)
        session_cancel(session=session, reason="the learner asked in chat")
        return {"cancelled": cancelled}

    def _t_log_checkin(self, outcome: str, session_id: int | None = None) -> dict:
        session = None
        if session_id is not None:
            session = PlannedSession.objects.select_related("plan").filter(
                pk=session_id, plan__learner=self.learner).first()
            if session is None:
                raise ApplicationError(f"no session {session_id} for this learner", field="session_id")
        checkin = checkin_log(learner=self.learner, outcome=outcome, session=session, message=self.message)
        return {"checkin_id": checkin.id, "outcome": outcome, "session": _session_json(session) if session else None}
