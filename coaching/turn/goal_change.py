"""A learner who has finished onboarding changes their goal ("actually, my goal is to learn the
piano"), their best time ("actually evenings suit me better now"), their weekly hours, their
confidence score ("my confidence is more like a 7 now") or the goal's area ("change the category to
career"). Code only: the new value is
read by the router (the goal with the same rules as at the goal step, its category mapped by
rules; the time by `onboarding.time_correction`), the profile is written through the profile
service, the learner is told exactly what changed, and "undo" puts the old value back (the write
is recorded as an undoable `profile_update`). A new weekly total or best time the learner only
weighs in a question ("maybe I should lower it to 3 hours… what do you think?") is offered, not
written, and so is a change only a model's proposal read (the words point at the value, but that
they mean a change of the profile is the model's guess): the offer is one pending option, and a
yes to it writes the change the same way."""

from __future__ import annotations

from decimal import Decimal

from coaching.models import BestTime, GoalCategory
from coaching.onboarding.values import map_category
from coaching.services import profile_update


def _write(run, arguments: dict, previous: dict, **fields) -> None:
    """Write the profile fields through the profile service and record the write as an undoable
    `profile_update` (undo restores `previous`)."""
    updated = profile_update(learner=run.learner, **fields)
    run.toolbox.calls.append({"name": "profile_update", "arguments": arguments,
                              "result": {"onboarding_step": updated.onboarding_step, "previous": previous},
                              "ok": True, "by": "code"})


def goal_change_turn(run) -> str:
    run.outcome = "templated"
    profile, goal = run.profile, run.reading.get("goal")
    category = map_category(goal) or GoalCategory.OTHER
    previous = {"primary_goal": profile.primary_goal, "goal_category": profile.goal_category}
    _write(run, {"primary_goal": goal, "goal_category": category}, previous, primary_goal=goal, goal_category=category)
    label = GoalCategory(category).label.lower()
    return (f"Updated: your goal is “{goal}” ({label}; it was “{previous['primary_goal']}”). Your sessions stay "
            "as they are: say “let's plan” for a week built around the new goal, or “undo” to keep the old one.")


def time_change_turn(run, best_time: str | None = None) -> str:
    run.outcome = "templated"
    # A change only a model's proposal read ("I work night shifts" as a new best time) is asked about.
    if best_time is None and run.reading.proposed and (offer := change_offer(run, ("time_of_day",))):
        return offer
    profile, best_time = run.profile, best_time or run.reading.get("time_of_day")
    new = BestTime(best_time).label.lower()
    if profile.best_time == best_time:
        return f"Noted: {new} is already your best time."
    previous = {"best_time": profile.best_time}
    old = BestTime(profile.best_time).label.lower() if profile.best_time else "not set"
    _write(run, {"best_time": best_time}, previous, best_time=best_time)
    return (f"Updated: your best time is {new} (it was {old}). Sessions already planned stay as they are: say "
            "“let's plan” for a week at the new time, or “undo” to keep the old one.")


def _hours(hours: Decimal) -> str:
    return f"{hours.normalize():f} hour{'' if hours == 1 else 's'}"


def _weekly_total(said: float | str) -> Decimal | None:
    """A weekly total as the profile stores it (two decimals), or None outside what can be planned."""
    hours = Decimal(str(said)).quantize(Decimal("0.01"))
    return hours if Decimal("0.5") <= hours <= Decimal("80") else None


def hours_change_turn(run, hours_said: float | str | None = None) -> str:
    """'I can only do 2 hours a week now': the weekly hours, written and stated, undoable."""
    run.outcome = "templated"
    if hours_said is None and run.reading.proposed and (offer := change_offer(run, ("weekly_hours",))):
        return offer
    profile = run.profile
    hours = _weekly_total(hours_said if hours_said is not None else run.reading.get("weekly_hours"))
    if hours is None:
        return "I can plan with 0.5 to 80 hours a week: how many would you like?"
    if profile.weekly_hours == hours:
        return f"Noted: {_hours(hours)} a week is already your budget."
    previous = {"weekly_hours": str(profile.weekly_hours) if profile.weekly_hours is not None else None}
    _write(run, {"weekly_hours": str(hours)}, previous, weekly_hours=hours)
    old = f"{profile.weekly_hours.normalize():f}" if profile.weekly_hours is not None else "not set"
    return (f"Updated: {_hours(hours)} a week (it was {old}). Sessions already planned stay as they "
            "are: say “let's plan” for a week that fits, or “undo” to keep the old number.")


def category_change_turn(run) -> str:
    """'change the category to career': the goal's area, written and stated, undoable."""
    run.outcome = "templated"
    profile, category = run.profile, run.reading.get("category")
    new = GoalCategory(category).label.lower()
    if profile.goal_category == category:
        return f"Noted: {new} is already the area of your goal."
    previous = {"goal_category": profile.goal_category}
    _write(run, {"goal_category": category}, previous, goal_category=category)
    old = GoalCategory(profile.goal_category).label.lower() if profile.goal_category else "not set"
    return f"Updated: the area of your goal is {new} (it was {old}). Say “undo” to keep the old one."


def confidence_change_turn(run) -> str:
    """'my confidence is more like a 7 now': the score from 1 to 10, written and stated, undoable."""
    run.outcome = "templated"
    profile, confidence = run.profile, int(run.reading.get("confidence"))
    if profile.confidence == confidence:
        return f"Noted: {confidence}/10 is already your confidence score."
    previous = {"confidence": profile.confidence}
    _write(run, {"confidence": confidence}, previous, confidence=confidence)
    old = f"{profile.confidence}/10" if profile.confidence is not None else "not set"
    return f"Updated: your confidence is {confidence}/10 (it was {old}). Say “undo” to keep the old score."


# What an offer may change: the reading's slots a question can weigh.
_OFFERABLE = ("weekly_hours", "time_of_day")


def change_offer(run, slots: tuple[str, ...] = _OFFERABLE) -> str:
    """The change a question weighs, offered in code's words and left pending as one option (the
    reply's `offered_options`); "" when the question weighs none or it is what the profile holds."""
    reading, profile = run.reading, run.profile
    slot = next((s for s in slots if reading.has(s)), None)
    if slot is None:
        return ""
    value = reading.get(slot)
    if slot == "weekly_hours":
        hours = _weekly_total(value)
        if hours is None or profile.weekly_hours == hours:
            return ""
        now = f"{profile.weekly_hours.normalize():f} now" if profile.weekly_hours is not None else "not set yet"
        change, value = f"your weekly hours to {hours.normalize():f} ({now})", str(hours)
    else:
        if profile.best_time == value:
            return ""
        now = f"{BestTime(profile.best_time).label.lower()} now" if profile.best_time else "not set yet"
        change = f"your best time to {BestTime(value).label.lower()} ({now})"
    run.offered_options = [{"label": "A", "kind": "change", slot: value, "summary": f"change {change}"}]
    return f"Shall I change {change}? Say “yes” and I will; sessions already planned stay as they are."


def offered_change_turn(run) -> str:
    """The learner's answer to an offered change: a yes writes it (undoable), a no keeps the profile."""
    offered = run.previous.offered_options[0]
    if run.reading.get("option") != offered["label"]:
        run.outcome = "templated"
        return "OK, I'll leave it as it is."
    if "weekly_hours" in offered:
        return hours_change_turn(run, offered["weekly_hours"])
    return time_change_turn(run, offered["time_of_day"])
