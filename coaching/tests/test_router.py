"""The router's rules table (plain rules, no model), over the rules' reading of each message.

The router takes a Reading, not text: a request to plan is rule `plan_request` whatever words
asked for it (it was `explicit_plan`, `planning_cue` or `plan_constraint` by the phrase that
matched), a move is `move_request` (was `reschedule_request`), a question about the plan is
answered from the plan (`plan_question`, where the planner used to offer new options), and a
look back is `reflection_cue` (was also `explicit_reflect`)."""

from datetime import date

import pytest

from coaching.turn.reading.rules import read_by_rules
from coaching.turn.reading.types import ReadContext
from coaching.turn.router import RouteState, route

ON = RouteState(onboarded=True)
_OPTIONS = {"plan": ({"label": "A", "kind": "plan", "summary": "3 sessions"}, {"label": "B", "kind": "plan",
                                                                             "summary": "2 sessions"}),
            "report": ({"label": "A", "kind": "report", "summary": "Tue 18:00", "day": "Tue"},
                       {"label": "B", "kind": "report", "summary": "Thu 18:00", "day": "Thu"}),
            "change": ({"label": "A", "kind": "change", "weekly_hours": "3", "summary": "change your weekly hours"},)}


def _route(state: RouteState, text: str):
    options = _OPTIONS[state.options_kind] if state.options_pending else ()
    ctx = ReadContext(step="done" if state.onboarded else "goal", options=options,
                      pending_kind=state.options_kind if state.options_pending else "", today=date(2030, 1, 9),
                      undoable=bool(state.undo_specialist))
    return route(state, read_by_rules(text, ctx))


@pytest.mark.parametrize("state,text,specialist,rule", [
    (RouteState(onboarded=False), "let's plan", "onboarding", "onboarding_incomplete"),
    (ON, "let's plan my week", "planner", "plan_request"),
    (RouteState(onboarded=True, checkin_due=True), "let's plan", "planner", "plan_request"),  # explicit beats due
    (RouteState(onboarded=True, checkin_due=True), "hello there", "checkin", "checkin_due"),
    (ON, "I did my session today", "checkin", "session_report"),
    (ON, "I skipped it, too tired", "checkin", "session_report"),
    (RouteState(onboarded=True, options_pending=True), "option B", "planner", "option_answer"),
    (RouteState(onboarded=True, options_pending=True), "yes", "planner", "option_answer"),
    (RouteState(onboarded=True, options_pending=True, options_kind="change"), "yes", "onboarding", "change_choice"),
    (RouteState(onboarded=True, options_pending=True, options_kind="change"), "no thanks", "onboarding",
     "change_choice"),
    (ON, "yes", "coach", "default"),  # no options pending: "yes" is just a message
    (ON, "when should I schedule practice?", "planner", "plan_question"),
    (ON, "I feel stuck and frustrated", "reflection", "reflection_cue"),
    (ON, "let's reflect on this week", "reflection", "reflection_cue"),
    (ON, "what's a good warm-up?", "coach", "default"),
    (ON, "actually, my goal is to learn the piano", "onboarding", "goal_change"),
    (ON, "change my goal to running a 10k", "onboarding", "goal_change"),
    (ON, "my goal feels far away today", "coach", "default"),
    # A change of the best time is code's, like the goal; a time named in a report, a move or a
    # question is not one.
    (ON, "actually evenings suit me better now", "onboarding", "time_change"),
    (ON, "I've stopped practising in the mornings, evenings work better now", "onboarding", "time_change"),
    (ON, "I'd rather practise after work from now on", "onboarding", "time_change"),
    (ON, "I practised this morning", "checkin", "session_report"),
    (ON, "can we move tomorrow's session to the evening?", "planner", "move_request"),
    (ON, "is the evening better for memory?", "coach", "default"),
    (ON, "good morning!", "coach", "default"),
    (ON, "my evenings are busy this week", "coach", "default"),
    (ON, "I prefer studying Portuguese in the evening after work.", "coach", "default"),  # news, not an edit
    (ON, "sorry, I meant mornings", "onboarding", "time_change"),
    # "this week" plans only when the message looks ahead; news about the week is answered, not planned.
    (ON, "all my tomato seedlings died this week. kind of gutted", "coach", "default"),
    (ON, "what should I do this week?", "planner", "plan_question"),
    # Looking ahead is news for the coach, not a request to plan: options come when asked for.
    (ON, "I want to practise more this week", "coach", "default"),
    (ON, "I'll have more time this week", "coach", "default"),
    (ON, "next week is going to be a mess again", "coach", "default"),
    (ON, "can you plan my week?", "planner", "plan_request"),
    # After plan options, an answer saying when is the planner's (it had asked "tell me the days or
    # times you're free"); without options pending it is news for the coach.
    (RouteState(onboarded=True, options_pending=True), "only Tuesdays and Saturdays at 14:00", "planner",
     "plan_request"),
    (RouteState(onboarded=True, options_pending=True), "not on weekends", "planner", "plan_request"),
    (RouteState(onboarded=True, options_pending=True, options_kind="report"), "not on weekends", "coach",
     "default"),
    (ON, "only Tuesdays and Saturdays at 14:00", "coach", "default"),
])
def test_rules_table(state, text, specialist, rule):
    decision = _route(state, text)
    assert (decision.specialist, decision.rule) == (specialist, rule)
    assert decision.reason


@pytest.mark.parametrize(("text", "best_time"), [
    ("actually evenings suit me better now", "evening"),
    ("I've stopped practising in the mornings, evenings work better now", "evening"),  # the clause decides
    ("I'd rather practise after work from now on", "evening"),
    ("I switched jobs, so now lunchtime is better", "midday"),
])
def test_time_change_reads_the_new_time(text, best_time):
    reading = read_by_rules(text, ReadContext(step="done"))
    assert _route(ON, text).rule == "time_change" and reading.get("time_of_day") == best_time
