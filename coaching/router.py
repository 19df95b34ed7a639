"""The router: plain rules, no model. The first rule that matches wins; the rule name and a
human-readable reason are stored on the Turn. Pure function of (state, message text) so the whole
rules table is unit-tested without a database or a model."""

from __future__ import annotations

import re
from dataclasses import dataclass

from coaching import intent as intents
from coaching.onboarding.answers import goal_correction, time_correction
from coaching.plan_request import any_constraint, read_plan_request

ONBOARDING, PLANNER, CHECKIN, REFLECTION, COACH = "onboarding", "planner", "checkin", "reflection", "coach"
SPECIALISTS = (ONBOARDING, PLANNER, CHECKIN, REFLECTION, COACH)


@dataclass(frozen=True)
class RouteState:
    onboarded: bool
    checkin_due: bool = False  # a planned session has ended and has no report yet
    options_pending: bool = False  # the previous coach turn offered options (A/B/…)
    options_kind: str = "plan"  # plan | reschedule | report (which session a report was about)
    undo_specialist: str = ""  # the previous turn wrote something (and who): "undo" can take it back


@dataclass(frozen=True)
class RouteDecision:
    specialist: str
    rule: str
    reason: str
    goal: str = ""  # the new goal read by the `goal_change` rule, so the turn does not parse it again
    best_time: str = ""  # the new best time read by the `time_change` rule


def _any(patterns: tuple[str, ...], text: str) -> str | None:
    for pattern in patterns:
        match = re.search(pattern, text)
        if match:
            return match.group(0)
    return None


# Explicit requests name the specialist: they beat every default below.
EXPLICIT_PLAN = (r"\blet'?s plan\b", r"\bplan (my|the|this|next) week\b", r"\bmake (me )?a plan\b",
                 r"\b(new|weekly|study) plan\b", r"\bschedule (a |my |some )?sessions?\b", r"\breschedule\b")
EXPLICIT_REFLECT = (r"\blet'?s reflect\b", r"\bi want to reflect\b", r"\breflect on\b", r"\bweekly review\b")
EXPLICIT_CHECKIN = (r"\bcheck[- ]?in\b", r"\blog (a|my) session\b")
# Answers to offered options: "option B", "b", "the second one", "yes", "sounds good".
OPTION_ANSWER = (r"^\s*(option\s*)?[abc]\s*[.!]?\s*$", r"\boption\s*[abc]\b",
                 r"\b(the )?(first|second|third) (one|option)\b",
                 r"^\s*(yes|yeah|yep|yup|sure|ok|okay|sounds good|let'?s do (it|that)|go for it|perfect|great|"
                 r"please|do it)\b",
                 r"\b(mon|tues|wednes|thurs|fri|satur|sun)day\b")
PLANNING_CUES = (r"\bplan\b", r"\bschedule\b", r"\bwhen should i\b", r"\bsessions?\b",
                 r"\bnext week\b", r"\btimetable\b", r"\bcalendar\b")
# "this week" is a planning cue only when the message looks ahead: "all my tomato seedlings died
# this week. kind of gutted" is news to respond to, and was once answered with plan options.
THIS_WEEK = r"\bthis week\b"
LOOKS_AHEAD = (r"\?", r"\b(will|going to|gonna|should|could|can|want to|wanna|need to|have to|hope to|try to)\b",
               r"\w'll\b", r"\b(what|how much|how many) (should|can|could)\b")
REFLECTION_CUES = (r"\breflect", r"\bhow am i doing\b", r"\bprogress\b", r"\bstruggl", r"\bfeel(ing)? (stuck|like)\b",
                   r"\blooking back\b", r"\bwhat went well\b", r"\bmotivat", r"\bproud\b", r"\bfrustrat")


def route(state: RouteState, text: str) -> RouteDecision:
    norm = text.strip().lower()
    intent = intents.parse_intent(text)
    if state.undo_specialist and intent.kind == intents.UNDO:
        return RouteDecision(state.undo_specialist, "undo", f"learner takes back the last write ({intent.cue!r})")
    if not state.onboarded:
        return RouteDecision(ONBOARDING, "onboarding_incomplete",
                             "profile not complete: the onboarding gate runs first")
    if goal := goal_correction(text):
        # Code writes the new goal (coaching.turn.goal_change); the model is not asked to.
        return RouteDecision(ONBOARDING, "goal_change", "learner changes their goal after onboarding", goal=goal)
    if intent.kind not in (intents.REPORT, intents.RESCHEDULE, intents.QUESTION) and (when := time_correction(text)):
        # Seen trying it: "actually evenings suit me better now" got small talk, the profile kept
        # "morning" and the next plan was at 08:00. Code writes the new time, as for the goal.
        return RouteDecision(ONBOARDING, "time_change", f"learner changes their best time to {when} after onboarding",
                             best_time=when)
    if intent.kind == intents.RESCHEDULE:
        return RouteDecision(PLANNER, "reschedule_request", f"learner asks to move sessions ({intent.cue!r})")
    if hit := _any(EXPLICIT_PLAN, norm):
        return RouteDecision(PLANNER, "explicit_plan", f"learner asked to plan ({hit!r})")
    if hit := _any(EXPLICIT_REFLECT, norm):
        return RouteDecision(REFLECTION, "explicit_reflect", f"learner asked to reflect ({hit!r})")
    if state.options_pending and (hit := _any(OPTION_ANSWER, norm)):
        if state.options_kind == "report":
            return RouteDecision(CHECKIN, "report_choice", f"answer {hit.strip()!r} to which session was meant")
        return RouteDecision(PLANNER, "option_answer", f"answer {hit.strip()!r} to the options offered last turn")
    if intent.kind == intents.REPORT:
        return RouteDecision(CHECKIN, "session_report", f"message reports a {intent.outcome} session ({intent.cue!r})")
    if hit := _any(EXPLICIT_CHECKIN, norm):
        return RouteDecision(CHECKIN, "session_report", f"message reports on a session ({hit.strip()!r})")
    if state.options_pending and state.options_kind == "plan" and any_constraint(read_plan_request(text)):
        # The planner asked for the days or times that are free ("only Tuesdays and Saturdays at
        # 14:00"): the answer names no option and no planning word, and went to the general coach.
        return RouteDecision(PLANNER, "plan_constraint", f"says when, after the plan options: {text[:60]!r}")
    if state.checkin_due and intent.kind != intents.QUESTION:
        return RouteDecision(CHECKIN, "checkin_due", "a planned session has ended without a report")
    if (hit := _any(PLANNING_CUES, norm)) or ((hit := _any((THIS_WEEK,), norm)) and _any(LOOKS_AHEAD, norm)):
        return RouteDecision(PLANNER, "planning_cue", f"planning cue {hit!r}")
    if hit := _any(REFLECTION_CUES, norm):
        return RouteDecision(REFLECTION, "reflection_cue", f"reflection cue {hit!r}")
    return RouteDecision(COACH, "default", "no rule matched: general coach")
