"""What a request to plan says about when is read by code and used by the options (trial of
2026-12-03: "let's plan around my night shifts next week" got the profile's options, and nothing
said that the shifts were not used). Parsing is pure; the options are checked on real rows."""

import itertools
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from coaching.models import LearnerProfile
from coaching.services import plan_options
from coaching.tests.conftest import onboarded_learner
from coaching.turn.reading.plan_request import PlanRequest, read_plan_request

WEEKEND = frozenset({5, 6})


@pytest.mark.parametrize("text, expected", [
    ("can we plan my week?", PlanRequest()),
    ("plan my week, weekends only", PlanRequest(days=WEEKEND, days_ruled_out=True)),
    ("plan my week but not on weekends", PlanRequest(days=frozenset(range(5)), days_ruled_out=True)),
    ("only Tuesdays and Thursdays please", PlanRequest(days=frozenset({1, 3}), days_ruled_out=True)),
    ("plan next week, I can't do Fridays", PlanRequest(days=frozenset({0, 1, 2, 3, 5, 6}), days_ruled_out=True)),
    ("can we plan my week? evenings are best", PlanRequest(best_time="evening")),
    ("plan my week at 7pm", PlanRequest(hour=19)),
    ("let's plan around my night shifts next week", PlanRequest(busy_time="night", unplaced="night shifts")),
    ("I work mornings, plan my week", PlanRequest(busy_time="morning")),
    ("plan my week around my night shifts, only Mondays and Wednesdays",
     PlanRequest(days=frozenset({0, 2}), busy_time="night", days_ruled_out=True)),
    ("plan my week around my kids", PlanRequest(unplaced="kids")),
    ("any day but Friday works", PlanRequest(days=frozenset({0, 1, 2, 3, 5, 6}), days_ruled_out=True)),
    ("plan my week, I'm busy on Tuesday", PlanRequest(days=frozenset({0, 2, 3, 4, 5, 6}), days_ruled_out=True)),
    ("I sat down to plan my week", PlanRequest()),  # "sat" is a word, not Saturday
    # A day for the new session is not a day the others are ruled out of.
    ("schedule a practice on Friday", PlanRequest(days=frozenset({4}))),
    ("can you just add one on Friday", PlanRequest(days=frozenset({4}))),
    ("plan my week, just weekends", PlanRequest(days=WEEKEND, days_ruled_out=True)),
])
def test_the_request_is_read_by_rules(text, expected):
    assert read_plan_request(text) == expected


def test_what_was_read_is_said_in_words():
    assert read_plan_request("weekends only, in the evening").said() == ["weekends only", "in the evening"]
    assert read_plan_request("around my night shifts").said() == ["not at night"]
    assert read_plan_request("not on Fridays").said() == ["not on Fridays"]


def _starts(options):
    return [[datetime.fromisoformat(s["start"]) for s in o["sessions"]] for o in options]


@pytest.mark.django_db
def test_options_keep_to_the_days_and_time_asked_for(api):
    learner = onboarded_learner(api[0])  # profile: evenings, 3 h a week
    now = datetime(2026, 12, 7, 9, 0, tzinfo=ZoneInfo("UTC"))  # a Monday
    options = plan_options(learner=learner, profile=LearnerProfile.objects.get(learner=learner), now=now,
                           request=read_plan_request("plan my week, weekends only, at 10am"))
    starts = _starts(options)
    assert [[s.weekday() for s in o] for o in starts] == [[5, 6], [5, 6]][:len(starts)]
    assert all(s.hour == 10 for o in starts for s in o)
    assert len(options) == 1  # two allowed days: both options would be the same two sessions
    assert options[0]["summary"] == "2 sessions of 90 min (Sat, Sun at 10:00)"


@pytest.mark.django_db
def test_a_busy_time_that_is_the_profiles_best_time_moves_the_sessions(api):
    learner = onboarded_learner(api[0])  # best time: evening
    now = datetime(2026, 12, 7, 9, 0, tzinfo=ZoneInfo("UTC"))
    plain = plan_options(learner=learner, profile=LearnerProfile.objects.get(learner=learner), now=now)
    busy = plan_options(learner=learner, profile=LearnerProfile.objects.get(learner=learner), now=now,
                        request=read_plan_request("I work evenings, plan my week"))
    assert {s.hour for o in _starts(plain) for s in o} == {19}
    assert {s.hour for o in _starts(busy) for s in o} == {8}  # the first free time of day
    spaced = _starts(plain)[0]
    assert [b - a for a, b in itertools.pairwise(spaced)] == [timedelta(days=2)] * 2


@pytest.mark.parametrize("text,said", [
    # Trial of 2026-12-04: read as every day.
    ("weekends only, I work late on weekdays", ["weekends only"]),
    ("I work on Mondays and Fridays", ["not on Mondays or Fridays"]),
    ("not on Mondays or Fridays", ["not on Mondays or Fridays"]),
    ("I can study after work on Mondays", ["on Mondays", "in the evening"]),  # a time on Monday, not Monday taken
])
def test_days_taken_by_work_and_days_in_a_list(text, said):
    assert read_plan_request(text).said() == said


@pytest.mark.parametrize("text,said", [
    ("weekends mostly", ["on weekends"]),
    ("usually weekdays in the evening", ["on weekdays", "in the evening"]),
    ("weekdays only", ["weekdays only"]),
])
def test_days_are_said_back_as_only_those_days_only_where_the_learner_ruled_the_others_out(text, said):
    assert read_plan_request(text).said() == said


def test_days_said_earlier_count_when_the_request_names_none():
    from coaching.turn.reading.plan_request import with_earlier

    earlier = ["evenings I guess", "weekends only, I work late on weekdays", "not on Fridays"]  # newest first
    assert with_earlier(read_plan_request("let's plan my week"), earlier).said() == ["weekends only"]
    assert with_earlier(read_plan_request("plan my week, only Tuesdays"), earlier).said() == ["on Tuesdays"]
    assert with_earlier(read_plan_request("plan my week"), ["evenings I guess", "6"]).said() == []


@pytest.mark.parametrize("text,minutes", [
    ("I want to learn Portuguese for a move to Lisbon next year, maybe 20 minutes a day", 20),
    ("half an hour every evening", 30), ("30-minute sessions please", 30), ("an hour each time", 60),
    ("I did 20 minutes of Duolingo this morning", None), ("3 hours a week", None), ("plan my week", None),
])
def test_a_sessions_length_is_read(text, minutes):
    assert read_plan_request(text).session_minutes == minutes


@pytest.mark.django_db
def test_a_length_said_at_onboarding_shapes_the_plan(api):
    """Trial of 2026-12-04: "maybe 20 minutes a day" got options of 50 and 75 minutes."""
    from dataclasses import replace

    from coaching.turn.reading.plan_request import with_earlier

    learner = onboarded_learner(api[0])
    LearnerProfile.objects.filter(learner=learner).update(weekly_hours=2.5, best_time="morning")
    profile = LearnerProfile.objects.get(learner=learner)
    request = with_earlier(read_plan_request("let's plan my week"),
                           ["5", "mornings before work", "I want to learn Portuguese, maybe 20 minutes a day"])
    assert request.said() == ["20 min at a time"]
    options = plan_options(learner=learner, profile=profile, request=request)
    assert len(options) == 1 and options[0]["summary"].startswith("7 sessions of 20 min")
    assert {s["minutes"] for s in options[0]["sessions"]} == {20}
    weekends = plan_options(learner=learner, profile=profile, request=replace(request, days=WEEKEND))
    assert weekends[0]["summary"].startswith("2 sessions of 20 min")


@pytest.mark.parametrize("text,minutes", [
    # One reading of an amount for the hours, the session's length and the goal's clauses
    # (coaching.onboarding.values): a count gives the sitting too, a week's total does not.
    ("45 minutes, four evenings a week", 45), ("3 times a week, 2 hours each", 120), ("2 hours a day", 120),
    ("about 3 hours a week", None), ("3", None),
])
def test_a_sittings_length_comes_from_the_same_reading_as_the_hours(text, minutes):
    assert read_plan_request(text).session_minutes == minutes
