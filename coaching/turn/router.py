"""The router: plain rules over the Reading (coaching.turn.reading) and the state, no model and no
parsing of its own. The first rule that matches wins; the rule name and a human-readable reason
are stored on the Turn. A pure function of (state, reading), unit-tested without a database."""

from __future__ import annotations

from dataclasses import dataclass

from coaching.turn.reading.types import (
    ANSWER,
    CANCEL,
    CHANGE,
    MOVE,
    PLAN,
    QUESTION,
    REPORT,
    UNDO,
    Reading,
)

ONBOARDING, PLANNER, CHECKIN, REFLECTION, COACH = "onboarding", "planner", "checkin", "reflection", "coach"
SPECIALISTS = (ONBOARDING, PLANNER, CHECKIN, REFLECTION, COACH)


@dataclass(frozen=True)
class RouteState:
    onboarded: bool
    checkin_due: bool = False  # a planned session has ended and has no report yet
    options_pending: bool = False  # the previous coach turn offered options (A/B/…)
    options_kind: str = "plan"  # plan | reschedule | report | move | change (what the options were for)
    undo_specialist: str = ""  # the previous turn wrote something (and who): "undo" can take it back


@dataclass(frozen=True)
class RouteDecision:
    specialist: str
    rule: str
    reason: str


# Rules that send a message to the onboarding specialist after onboarding: the learner changes a
# profile value in words that may say more about their life ("I work night shifts now, so mornings").
PROFILE_CHANGES = ("goal_change", "time_change", "confidence_change", "hours_change", "category_change")


def route(state: RouteState, reading: Reading) -> RouteDecision:
    act, cue = reading.act, reading.cue
    if state.undo_specialist and act == UNDO:
        return RouteDecision(state.undo_specialist, "undo", f"learner takes back the last write ({cue})")
    if not state.onboarded:
        return RouteDecision(ONBOARDING, "onboarding_incomplete",
                             "profile not complete: the onboarding gate runs first")
    if act == CHANGE and reading.has("goal"):
        return RouteDecision(ONBOARDING, "goal_change", "learner changes their goal after onboarding")
    if act == CHANGE and reading.has("time_of_day"):
        return RouteDecision(ONBOARDING, "time_change",
                             f"learner changes their best time to {reading.get('time_of_day')} after onboarding")
    if act == CHANGE and reading.has("confidence"):
        return RouteDecision(ONBOARDING, "confidence_change",
                             f"learner changes their confidence to {reading.get('confidence')}")
    if act == CHANGE and reading.has("weekly_hours"):
        return RouteDecision(ONBOARDING, "hours_change",
                             f"learner changes their weekly hours to {reading.get('weekly_hours')}")
    if act == CHANGE and reading.has("category"):
        return RouteDecision(ONBOARDING, "category_change",
                             f"learner changes the area of their goal to {reading.get('category')}")
    if state.options_pending and act == ANSWER:
        if state.options_kind == "change":
            return RouteDecision(ONBOARDING, "change_choice", f"answer to the profile change offered last turn ({cue})")
        if state.options_kind == "report":
            return RouteDecision(CHECKIN, "report_choice", f"answer to which session was meant ({cue})")
        if state.options_kind == "move":
            return RouteDecision(PLANNER, "move_choice", f"answer to which session to move ({cue})")
        return RouteDecision(PLANNER, "option_answer", f"answer to the options offered last turn ({cue})")
    if act == MOVE:
        return RouteDecision(PLANNER, "move_request", f"learner asks to move a session ({cue})")
    if act == CANCEL:
        return RouteDecision(PLANNER, "cancel_request", f"learner asks to cancel a session ({cue})")
    if act == PLAN:
        return RouteDecision(PLANNER, "plan_request", f"learner asks to plan ({cue})")
    if act == REPORT:
        return RouteDecision(CHECKIN, "session_report", f"message reports a session ({cue})")
    if act == QUESTION and reading.get("about") in ("plan", "calendar", "progress"):
        return RouteDecision(PLANNER, "plan_question", f"question about the {reading.get('about')} ({cue})")
    if state.checkin_due and act != QUESTION:
        return RouteDecision(CHECKIN, "checkin_due", "a planned session has ended without a report")
    if reading.get("about") == "reflection" or reading.get("concern"):
        return RouteDecision(REFLECTION, "reflection_cue", f"looks back or names a difficulty ({cue})")
    return RouteDecision(COACH, "default", f"no rule matched: general coach ({reading.act})")
