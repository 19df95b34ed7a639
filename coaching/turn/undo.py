"""Undo: the learner takes back the previous turn's writes ("undo", "no, I didn't"). Code only."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from coaching import onboarding
from coaching.models import BestTime, GoalCategory, OnboardingStep, PlannedSession
from coaching.services import (
    checkin_undo,
    profile_restore,
    session_makeup_undo,
    session_move,
    session_schedule,
    session_unschedule,
)
from core.errors import ApplicationError

UNDOABLE = ("log_checkin", "schedule_session", "move_session", "cancel_session", "apply_makeup", "profile_update")


def undoable_writes(turn) -> list[dict]:
    return [c for c in turn.tool_calls or [] if c.get("ok") and c.get("by") == "code" and c.get("name") in UNDOABLE]


def undo_turn(run, previous, toolbox) -> str:
    """Take back every write of the previous turn (the learner said "undo" / "no, I didn't"), and
    say what was taken back. Code only: no model call."""
    run.outcome = "templated"
    said = []
    restored_step = restored = ""
    for call in undoable_writes(previous):
        result = call.get("result") or {}
        if call["name"] == "log_checkin" and result.get("checkin_id"):
            if checkin_undo(learner=run.learner, checkin_id=result["checkin_id"]) is not None:
                said.append("the check-in")
        elif call["name"] == "schedule_session" and result.get("scheduled"):
            if session_unschedule(learner=run.learner, session_id=result["scheduled"]["id"]):
                said.append("a scheduled session")
        elif call["name"] == "move_session" and result.get("previous"):
            session = PlannedSession.objects.filter(pk=result["moved"]["id"], plan__learner=run.learner).first()
            try:
                if session is not None:
                    session_move(session=session, start=datetime.fromisoformat(result["previous"]["start"]),
                                 reason="the learner said undo")
                    said.append("the move")
            except ApplicationError as exc:  # the old time has passed, or is taken now
                toolbox.calls.append({"name": "undo_move", "arguments": {}, "result": {"error": str(exc)},
                                      "ok": False, "by": "code"})
        elif call["name"] == "apply_makeup" and result.get("scheduled"):
            ids = [s["id"] for s in result["scheduled"]]
            if session_makeup_undo(learner=run.learner, session_ids=ids, reason="the learner said undo"):
                said += ["a scheduled session"] * len(ids)
        elif call["name"] == "cancel_session" and result.get("cancelled"):
            old = result["cancelled"]
            try:
                session_schedule(learner=run.learner, start=datetime.fromisoformat(old["start"]),
                                 duration_minutes=old["minutes"], topic=old["topic"])
                said.append("the cancellation")
            except ApplicationError as exc:
                toolbox.calls.append({"name": "undo_cancel", "arguments": {}, "result": {"error": str(exc)},
                                      "ok": False, "by": "code"})
        elif call["name"] == "profile_update" and "previous" in result:
            profile = profile_restore(learner=run.learner, values=result["previous"])
            restored_step = profile.onboarding_step
            if restored_step == OnboardingStep.DONE:
                said.append("the change")
                restored = _restored(result["previous"])
            else:
                said.append("your last answer")
    toolbox.calls.append({"name": "undo", "arguments": {"trace_id": previous.trace_id}, "result": {"undone": said},
                          "ok": True, "by": "code"})
    if not said:
        return "There was nothing left to undo."
    parts = []
    for item, one, many in (("the check-in", "the check-in", "{n} check-ins"),
                            ("a scheduled session", "the scheduled session", "{n} scheduled sessions"),
                            ("the move", "the move (the session is back where it was)", "{n} moves"),
                            ("the cancellation", "the cancellation (the session is back in your plan)",
                             "{n} cancellations"),
                            ("your last answer", "your last answer", "your last answer"),
                            ("the change", f"the change ({restored})" if restored else "the change", "the changes")):
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


def _restored(previous: dict) -> str:
    """What a profile change taken back restored, in words ("weekly hours back to 2")."""
    words = []
    for field, value in previous.items():
        if field == "weekly_hours" and value is not None:
            words.append(f"weekly hours back to {Decimal(str(value)).normalize():f}")
        elif field == "best_time" and value:
            words.append(f"best time back to {BestTime(value).label.lower()}")
        elif field == "confidence" and value is not None:
            words.append(f"confidence back to {value}/10")
        elif field == "primary_goal" and value:
            words.append(f"goal back to “{value}”")
        elif field == "goal_category" and value and "primary_goal" not in previous:
            words.append(f"area back to {GoalCategory(value).label.lower()}")
    return ", ".join(words)
