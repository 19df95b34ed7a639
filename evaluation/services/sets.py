"""Writes for eval sets and rubrics: loading them from the shipped data files, and freezing a real
conversation into a set as a new transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.db import transaction

from coaching.models import Conversation, LearnerProfile, Message
from evaluation.models import EvalSet, Rubric, Transcript
from memory.models import Fact

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DEFAULT_SET_FILE = DATA_DIR / "core_v1.json"
DEFAULT_RUBRIC_FILE = DATA_DIR / "rubric_v1.json"


@transaction.atomic
def eval_set_load(*, data: dict[str, Any], only_missing: bool = False) -> EvalSet:
    """Create or update a set from its data file. Idempotent: transcripts are keyed by slug, so
    loading twice changes nothing; transcripts added from the admin (frozen) are kept. With
    `only_missing`, transcripts already in the database are left as they are (staff may have
    edited them) and only the file's new ones are added."""
    eval_set, _ = EvalSet.objects.update_or_create(
        name=data["name"], version=int(data.get("version", 1)),
        defaults={"description": data.get("description", "")})
    present = set(Transcript.objects.filter(eval_set=eval_set).values_list("slug", flat=True)) if only_missing \
        else set()
    for position, item in enumerate(data["transcripts"]):
        if item["slug"] in present:
            continue
        turns = [t if isinstance(t, dict) else {"text": t} for t in item["turns"]]
        Transcript.objects.update_or_create(
            eval_set=eval_set, slug=item["slug"],
            defaults={"title": item.get("title", item["slug"]), "tags": item.get("tags", []),
                      "starting_profile": item.get("profile", {}), "memory_snapshot": item.get("memory", []),
                      "learner_turns": turns, "prior_messages": item.get("prior", []),
                      "expected_behaviour": item.get("expected", ""), "expectations": item.get("expectations", {}),
                      "position": position})
    return eval_set


def eval_set_load_file(*, path: Path = DEFAULT_SET_FILE, only_missing: bool = False) -> EvalSet:
    return eval_set_load(data=json.loads(Path(path).read_text()), only_missing=only_missing)


def eval_set_add_new_from_file(*, path: Path = DEFAULT_SET_FILE) -> int:
    """Add the file's transcripts the database does not have yet; returns how many were added. The
    shipped set grows with the code: an install migrated before a transcript was added evaluated
    without it, silently. Transcripts already loaded are left as staff may have edited them."""
    data = json.loads(Path(path).read_text())
    before = Transcript.objects.filter(eval_set__name=data["name"], eval_set__version=int(data.get("version", 1)))
    count = before.count()
    eval_set_load(data=data, only_missing=True)
    return before.count() - count


@transaction.atomic
def rubric_load(*, data: dict[str, Any]) -> Rubric:
    """Create the rubric version if missing. An existing version is never overwritten from the file:
    staff may have edited it in the admin; a changed rubric should be a new version."""
    rubric, _ = Rubric.objects.get_or_create(
        version=int(data["version"]), defaults={"dimensions": data["dimensions"], "notes": data.get("notes", "")})
    return rubric


def rubric_load_file(*, path: Path = DEFAULT_RUBRIC_FILE) -> Rubric:
    return rubric_load(data=json.loads(Path(path).read_text()))


@transaction.atomic
def transcript_freeze_from_conversation(*, conversation_id: int, eval_set_id: int, slug: str = "",
                                        tags: list[str] | None = None) -> Transcript:
    """Copy a real conversation into a set, frozen as it was: the profile and memory facts as they
    are now, the learner messages as turns. Idempotent per (set, conversation)."""
    conversation = Conversation.objects.select_related("learner").get(pk=conversation_id)
    eval_set = EvalSet.objects.get(pk=eval_set_id)
    existing = Transcript.objects.filter(eval_set=eval_set, frozen_from_conversation_id=conversation_id).first()
    if existing is not None:
        return existing
    profile = LearnerProfile.objects.filter(learner=conversation.learner).first()
    starting_profile: dict[str, Any] = {}
    if profile is not None:
        starting_profile = {"primary_goal": profile.primary_goal, "goal_category": profile.goal_category,
                            "weekly_hours": float(profile.weekly_hours) if profile.weekly_hours is not None else None,
                            "best_time": profile.best_time, "confidence": profile.confidence,
                            "onboarding_step": profile.onboarding_step}
    memory_snapshot = [{"fact_type": f.fact_type, "content": f.content, "confidence": f.confidence}
                       for f in Fact.objects.filter(learner=conversation.learner).order_by("created_at")[:50]]
    messages = list(Message.objects.filter(conversation=conversation).order_by("created_at", "id"))
    turns = [{"text": m.content, "original_reply": next(
        (r.content for r in messages if r.reply_to_id == m.pk), "")} for m in messages if m.role == "learner"]
    category = starting_profile.get("goal_category") or ""
    position = (Transcript.objects.filter(eval_set=eval_set).order_by("-position").values_list("position", flat=True)
                .first() or 0) + 1
    return Transcript.objects.create(
        eval_set=eval_set, slug=(slug or f"conversation-{conversation_id}")[:100],
        title=f"Frozen conversation {conversation_id}", tags=tags or ["frozen"],
        starting_profile=starting_profile, memory_snapshot=memory_snapshot, learner_turns=turns,
        expected_behaviour="Frozen from a real conversation; see the original replies in learner_turns.",
        expectations={"goal_category": category} if category else {},
        frozen_from_conversation_id=conversation_id, position=position)
