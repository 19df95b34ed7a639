"""The memory read path every specialist uses: the profile line plus memory's context block."""

from __future__ import annotations

import logging

from coaching.models import GoalCategory, Learner, LearnerProfile
from coaching.selectors import profile_get
from memory.selectors import build_context

logger = logging.getLogger(__name__)


def profile_line(profile: LearnerProfile) -> str:
    parts = []
    if profile.primary_goal:
        category = dict(GoalCategory.choices).get(profile.goal_category, "")
        parts.append(f"goal: {profile.primary_goal}" + (f" ({category.lower()})" if category else ""))
    if profile.weekly_hours is not None:
        parts.append(f"{profile.weekly_hours.normalize():f} h/week")
    if profile.best_time:
        parts.append(f"best time: {profile.best_time}")
    if profile.confidence is not None:
        parts.append(f"confidence {profile.confidence}/10")
    return "About the learner: " + ("; ".join(parts) if parts else "nothing known yet") + "."


def context_for(learner: Learner) -> str:
    """THE read path for every specialist: the profile line (coaching owns it) + the memory block
    (recent facts + latest summary) from `memory.selectors.build_context`. A failing memory layer
    degrades to an empty block, never breaks a turn."""
    lines = [profile_line(profile_get(learner=learner))]
    try:
        block = build_context(learner.id)
    except Exception:  # memory must never take the coach down
        logger.exception("memory.build_context failed for learner %s", learner.id)
        block = ""
    if block:
        lines.append(str(block).strip())
    return "\n".join(lines)
