"""Writes that revise a fact after it was stored: edit (content or type), supersede, and the
resolution of a surprise (the review queue's "new replaces old" / "keep both" / "reject new").

Kept apart from `memory.services` (ingest, summaries, tiers) because these are the only writes a
client or a reviewer triggers on an existing fact. The same rules hold: keyword-only, typed,
atomic, and every change writes a FactHistory row in the same transaction. A superseded fact is
never deleted: it keeps its row and its history, gets `valid_to` and `superseded_by`, and leaves
the read path (`build_context` reads live facts only) and default search."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import ApplicationError
from core.llm import call_context, embed
from memory import rules
from memory.models import Fact, FactHistory
from memory.services.history import fact_ref

RESOLUTIONS = ("new_replaces_old", "keep_both", "reject_new")


def _snapshot(fact: Fact) -> dict[str, Any]:
    # Other facts by public id: clients read history rows as stored (memory.services.history).
    return {"fact_type": fact.fact_type, "content": fact.content, "confidence": round(fact.confidence, 4),
            "surprise": fact.surprise, "superseded_by": fact_ref(fact.superseded_by_id),
            "valid_to": fact.valid_to.isoformat() if fact.valid_to else None}


def _history(fact: Fact, change: str, before: dict | None, service: str, **extra: Any) -> None:
    FactHistory.objects.create(fact=fact, change=change, before=before, after={**_snapshot(fact), **extra},
                               service=service)


def _locked(fact_id: int) -> Fact:
    fact = Fact.objects.select_for_update().filter(pk=fact_id).first()
    if fact is None:
        raise ApplicationError("fact not found", code="not_found", field="fact_id", status=404)
    return fact


@transaction.atomic
def fact_update(*, fact_id: int, content: str | None = None, fact_type: str | None = None,
                service: str) -> Fact:
    """Edit a fact's text and/or type. New text is validated like ingest (strict), re-hashed and
    re-embedded, so search finds the fact by what it now says. Text another fact of the learner
    already has is a 409 (the exact-duplicate rule), and nothing changes."""
    fact = _locked(fact_id)
    if fact.superseded_by_id is not None:
        raise ApplicationError("a superseded fact is kept as it was; edit the fact that replaced it",
                               code="superseded", field="fact_id", status=409)
    clean = rules.validate_fact({"fact_type": fact_type or fact.fact_type,
                                 "content": fact.content if content is None else content,
                                 "confidence": fact.confidence}, strict=True)
    if clean.fact_type == fact.fact_type and clean.content == fact.content:
        return fact
    before = _snapshot(fact)
    fields = ["fact_type"]
    fact.fact_type = clean.fact_type
    if clean.content != fact.content:
        new_hash = rules.content_hash(clean.content)
        if Fact.objects.filter(learner_id=fact.learner_id, content_hash=new_hash).exclude(pk=fact.pk).exists():
            raise ApplicationError("the learner already has a fact with this text", code="duplicate",
                                   field="content", status=409)
        with call_context(service=service, learner_id=fact.learner_id):
            fact.embedding = embed([clean.content])[0]
        fact.content, fact.content_hash = clean.content, new_hash
        fields += ["content", "content_hash", "embedding"]
    try:
        with transaction.atomic():
            fact.save(update_fields=fields)
    except IntegrityError:  # a concurrent writer stored the same text first
        raise ApplicationError("the learner already has a fact with this text", code="duplicate",
                               field="content", status=409) from None
    _history(fact, "updated", before, service, reembedded="content" in fields)
    return fact


@transaction.atomic
def fact_supersede(*, fact_id: int, by_fact_id: int, service: str) -> Fact:
    """`fact_id` stops being valid now and points at the fact that replaces it. Both facts belong
    to the same learner; a fact cannot replace itself, and chains stay acyclic (the replacement
    must itself be live)."""
    if fact_id == by_fact_id:
        raise ApplicationError("a fact cannot supersede itself", field="superseded_by")
    old, new = _locked(fact_id), _locked(by_fact_id)
    if old.learner_id != new.learner_id:
        raise ApplicationError("fact not found", code="not_found", field="superseded_by", status=404)
    if new.superseded_by_id is not None:
        raise ApplicationError("the replacement is itself superseded", code="superseded",
                               field="superseded_by", status=409)
    if old.superseded_by_id == new.pk:
        return old
    before = _snapshot(old)
    old.superseded_by, old.valid_to = new, timezone.now()
    old.save(update_fields=["superseded_by", "valid_to"])
    _history(old, "superseded", before, service, by=str(new.public_id))
    _history(new, "supersedes", _snapshot(new), service, replaces=str(old.public_id))
    return old


@transaction.atomic
def surprise_resolve(*, fact_id: int, resolution: str, service: str) -> Fact:
    """Close a surprise (a new fact that conflicts with an older one) the way a reviewer decided:

    - `new_replaces_old`: the older fact is superseded by the new one;
    - `keep_both`: both stay valid (they were not really in conflict);
    - `reject_new`: the new fact is superseded by the older one (kept, out of context and search).

    The surprise flag is cleared in each case, so the fact leaves the review queue."""
    if resolution not in RESOLUTIONS:
        raise ApplicationError(f"resolution must be one of {', '.join(RESOLUTIONS)}", field="resolution")
    new = _locked(fact_id)
    if not new.surprise:
        raise ApplicationError("this fact is not in the surprise queue", code="not_surprise",
                               field="fact_id", status=409)
    before = _snapshot(new)
    old_id = new.conflicts_with_id
    new.surprise = False
    new.save(update_fields=["surprise"])
    _history(new, "surprise_resolved", before, service, resolution=resolution,
             conflicts_with=fact_ref(old_id))
    if old_id is not None and resolution == "new_replaces_old":
        fact_supersede(fact_id=old_id, by_fact_id=new.pk, service=service)
    elif old_id is not None and resolution == "reject_new":
        fact_supersede(fact_id=new.pk, by_fact_id=old_id, service=service)
    new.refresh_from_db()
    return new
