"""A learner who has finished onboarding changes their goal ("actually, my goal is to learn the
piano"). Code only: the new goal is read by the router with the same rules as at the goal step, its category is
mapped by rules, the profile is written through the profile service, the learner is told exactly
what changed, and "undo" puts the old goal back (the write is recorded as an undoable
`profile_update`)."""

from __future__ import annotations

from coaching.models import GoalCategory
from coaching.onboarding.values import map_category
from coaching.services import profile_update


def goal_change_turn(run, profile, goal: str, toolbox) -> str:
    run.outcome = "templated"
    category = map_category(goal) or GoalCategory.OTHER
    previous = {"primary_goal": profile.primary_goal, "goal_category": profile.goal_category}
    updated = profile_update(learner=run.learner, primary_goal=goal, goal_category=category)
    toolbox.calls.append({"name": "profile_update", "arguments": {"primary_goal": goal, "goal_category": category},
                          "result": {"onboarding_step": updated.onboarding_step, "previous": previous},
                          "ok": True, "by": "code"})
    label = GoalCategory(category).label.lower()
    return (f"Updated: your goal is “{goal}” ({label}; it was “{previous['primary_goal']}”). Your sessions stay "
            "as they are: say “let's plan” for a week built around the new goal, or “undo” to keep the old one.")
