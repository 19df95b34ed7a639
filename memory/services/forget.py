"""Deleting: one fact, or everything memory holds about a learner (with their telemetry rows
anonymised)."""

from __future__ import annotations

from django.db import transaction

from memory.models import Entity, ExtractionRun, Fact, Relation, Summary
from telemetry.services import telemetry_anonymise_learner


def fact_delete(*, fact_id: int) -> bool:
    deleted, _ = Fact.objects.filter(pk=fact_id).delete()
    return deleted > 0


def learner_forget(*, learner_id: int) -> dict[str, int]:
    """Delete everything memory holds about a learner and anonymise their telemetry rows."""
    counts: dict[str, int] = {}
    with transaction.atomic():
        for name, model in (("relations", Relation), ("entities", Entity), ("facts", Fact),
                            ("summaries", Summary), ("extractions", ExtractionRun)):
            _, per_model = model.objects.filter(learner_id=learner_id).delete()
            counts[name] = per_model.get(model._meta.label, 0)  # cascaded rows are not double-counted
    counts["telemetry_anonymised"] = int(telemetry_anonymise_learner(learner_id=learner_id) or 0)
    return counts
