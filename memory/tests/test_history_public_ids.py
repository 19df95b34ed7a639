"""Fact history as a client reads it carries public ids only: every change that names another fact,
a summary or a message (supersede, surprise and its resolution, strengthening, consolidation,
summarising) is walked through the API, and migration 0008 rewrites rows stored with integer keys.
Real database (SQLite or PostgreSQL, whichever DATABASE_URL names) and real MiniLM embeddings."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from core.identity.models import Conversation, Message
from core.llm import embed
from memory import rules
from memory.models import Fact, FactHistory, Summary
from memory.revisions import fact_supersede, surprise_resolve
from memory.services.consolidation import facts_consolidate
from memory.services.ingest import facts_ingest
from memory.services.summaries import summary_create
from memory.tests.test_api import client_and_learner  # noqa: F401  (a fixture)

BASE = "/api/v1/memory"
# Integers a history row may hold that are not ids: counts and the like. Any other integer in a
# row is taken for a database key, so a new key that leaks one fails here.
COUNTS = {"access_count", "mentions", "dropped"}
REFERENCES = {"superseded_by": Fact, "by": Fact, "replaces": Fact, "conflicts_with": Fact, "merged": Fact,
              "summary": Summary, "source_conversation": Conversation}


def _ingest(learner, content: str, *, fact_type: str = "preference", message=None):
    return facts_ingest(learner_id=learner.pk, facts=[rules.CleanFact(fact_type, content, 0.6)],
                        embeddings=embed([content]), source_agent="test", service="test",
                        source_message_id=message.pk if message else None)


def _integers(value: Any, path: str = "") -> list[str]:
    """Where a JSON value holds an integer outside the allowed counts."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        return [] if path.rsplit(".", 1)[-1] in COUNTS else [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _integers(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _integers(v, f"{path}.{i}" if path else str(i))]
    return []


def _references(rows: list[dict]) -> list[tuple[str, str]]:
    return [(key, snapshot[key]) for row in rows for snapshot in (row["before"], row["after"])
            if isinstance(snapshot, dict) for key in REFERENCES if snapshot.get(key) is not None]


@pytest.mark.django_db
def test_every_history_row_a_client_reads_names_rows_by_public_id(client_and_learner, make_message):  # noqa: F811
    api, learner, _ = client_and_learner
    # Strengthened, from a message (the row names the message's conversation).
    [kept] = _ingest(learner, "The learner is nervous when I have to speak, I freeze and forget every word.",
                     fact_type="barrier").created
    message = make_message(learner, "I freeze and forget every word.")
    again = _ingest(learner, "The learner freezes and forget every word.", fact_type="barrier", message=message)
    assert again.strengthened == [kept]
    # A surprise, resolved "new replaces old": conflicts_with, then superseded by / supersedes.
    assert _ingest(learner, "The learner studies 5 hours a week.").created
    [new] = _ingest(learner, "The learner studies 10 hours a week.").surprises
    surprise_resolve(fact_id=new, resolution="new_replaces_old", service="test")
    # Superseded directly, as the API's supersede does.
    [a] = _ingest(learner, "The learner practises piano on Sundays.").created
    [b] = _ingest(learner, "The learner practises piano on Saturdays now.").created
    fact_supersede(fact_id=a, by_fact_id=b, service="test")
    # Consolidated: two near duplicates that slipped in are merged (superseded_by, merged).
    now = timezone.now()
    twins = ["The learner prefers studying in the morning.", "The learner prefers to study in the morning."]
    for text, vector in zip(twins, embed(twins), strict=True):
        Fact.objects.create(learner=learner, fact_type="preference", content=text, embedding=vector,
                            content_hash=rules.content_hash(text), last_accessed_at=now)
    assert facts_consolidate(learner_id=learner.pk)["merged"] >= 1
    # Summarised.
    live = list(Fact.objects.filter(learner=learner, superseded_by__isnull=True).values_list("pk", flat=True))
    assert summary_create(learner_id=learner.pk, fact_ids=live, text="Studies and piano.", model="test")

    seen: dict[str, list[dict]] = {}
    for fact in Fact.objects.filter(learner=learner):
        detail = api.get(f"{BASE}/facts/{fact.public_id}")
        history = api.get(f"{BASE}/facts/{fact.public_id}/history")
        assert detail.status_code == history.status_code == 200, (detail.content, history.content)
        assert detail.json()["history"] == history.json()
        assert _integers(history.json()) == [], (fact.content, history.json())
        seen[fact.content] = history.json()
    rows = [row for rows in seen.values() for row in rows]
    found = _references(rows)
    # Every kind of reference was written, so the walk above did look at them.
    assert {key for key, _ in found} == set(REFERENCES), found
    for key, value in found:
        assert REFERENCES[key].objects.filter(public_id=UUID(value)).exists(), (key, value)
    assert FactHistory.objects.filter(fact__learner=learner).count() == len(rows)


@pytest.mark.django_db(transaction=True)
def test_migration_0008_rewrites_stored_integer_keys(make_learner):
    """Rows as the code before wrote them (integers) are rewritten to public ids; a key whose row
    is gone becomes null; counts stay as they are."""
    target = [("memory", "0007_summary_public_id")]
    executor = MigrationExecutor(connection)
    executor.migrate(target)
    # The models as they were at 0007 (today's Fact has columns added by later migrations).
    state = executor.loader.project_state(target).apps
    OldFact, OldSummary, OldHistory = (state.get_model("memory", name) for name in ("Fact", "Summary", "FactHistory"))
    try:
        learner = make_learner()
        conversation = Conversation.objects.create(learner=learner)
        message = Message.objects.create(conversation=conversation, role="learner", content="hi")
        now = timezone.now()
        old, new = (OldFact.objects.create(learner_id=learner.pk, fact_type="preference", content=c, content_hash=c,
                                           last_accessed_at=now) for c in ("old goal", "new goal"))
        summary = OldSummary.objects.create(learner_id=learner.pk, period_start=now, period_end=now, text="s",
                                            fact_count=1)
        gone = new.pk + 1000
        rows = [
            OldHistory.objects.create(fact=old, change="superseded", service="t",
                                       before={"superseded_by": None, "summary": None, "access_count": 3},
                                       after={"superseded_by": new.pk, "summary": summary.pk, "by": new.pk}),
            OldHistory.objects.create(fact=new, change="strengthened", service="t", before=None,
                                       after={"replaces": old.pk, "merged": gone, "conflicts_with": old.pk,
                                              "source_message": message.pk, "access_count": 1}),
            OldHistory.objects.create(fact=new, change="tier", service="t", before={"tier": "hot"},
                                       after={"tier": "warm"}),
        ]
        executor = MigrationExecutor(connection)
        executor.migrate([("memory", "0008_history_public_refs")])
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes("memory"))
    first, second, third = (FactHistory.objects.get(pk=r.pk) for r in rows)
    assert first.before == {"superseded_by": None, "summary": None, "access_count": 3}
    assert first.after == {"superseded_by": str(new.public_id), "summary": str(summary.public_id),
                           "by": str(new.public_id)}
    assert second.after == {"replaces": str(old.public_id), "merged": None, "conflicts_with": str(old.public_id),
                            "source_conversation": str(conversation.public_id), "access_count": 1}
    assert (third.before, third.after) == ({"tier": "hot"}, {"tier": "warm"})
