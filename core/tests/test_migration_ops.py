"""`public_id_operations` on a table that already has rows: each row gets a UUID of its own, the
column ends unique and defaulted. Run against a real migration (studies, research 0004) on the
database DATABASE_URL names (the suite runs on PostgreSQL and SQLite)."""

from __future__ import annotations

import uuid

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE, AFTER = ("research", "0003_identity_moved"), ("research", "0004_study_public_id")


@pytest.mark.django_db(transaction=True)
def test_existing_rows_each_get_their_own_public_id():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    try:
        old_study = executor.loader.project_state(BEFORE).apps.get_model("research", "Study")
        assert "public_id" not in {f.name for f in old_study._meta.get_fields()}
        pks = [old_study.objects.create(name=f"s{i}", start_date="2026-01-05", secret="x").pk for i in range(3)]
        executor = MigrationExecutor(connection)
        executor.migrate([AFTER])
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes("research"))
    study = apps.get_model("research", "Study")  # by label: core imports no app above it
    ids = list(study.objects.filter(pk__in=pks).values_list("public_id", flat=True))
    assert len(ids) == 3 and len(set(ids)) == 3 and all(isinstance(i, uuid.UUID) for i in ids)
    field = study._meta.get_field("public_id")
    assert field.unique and not field.null and field.default is uuid.uuid4
    assert study.objects.create(name="new", start_date="2026-01-05").public_id not in ids


MESSAGES_BEFORE, MESSAGES_AFTER = ("identity", "0002_public_ids"), ("identity", "0003_message_public_id")


@pytest.mark.django_db(transaction=True)
def test_existing_messages_each_get_their_own_public_id():
    """identity 0003 on a conversation that already has messages (a reply pointing at its learner
    message): every message gets a UUID of its own, the rows and their links stay as they were."""
    executor = MigrationExecutor(connection)
    executor.migrate([MESSAGES_BEFORE])
    try:
        old = executor.loader.project_state(MESSAGES_BEFORE).apps
        old_message = old.get_model("identity", "Message")
        assert "public_id" not in {f.name for f in old_message._meta.get_fields()}
        client = old.get_model("identity", "ApiClient").objects.create(name="c")
        learner = old.get_model("identity", "Learner").objects.create(client=client)
        conversation = old.get_model("identity", "Conversation").objects.create(learner=learner)
        asked = old_message.objects.create(conversation=conversation, role="learner", content="hi")
        replied = old_message.objects.create(conversation=conversation, role="coach", content="hello", reply_to=asked)
        pks = [asked.pk, replied.pk, *(old_message.objects.create(conversation=conversation, role="learner",
                                                                  content=f"m{i}").pk for i in range(3))]
        executor = MigrationExecutor(connection)
        executor.migrate([MESSAGES_AFTER])
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
    message = apps.get_model("identity", "Message")
    ids = list(message.objects.filter(pk__in=pks).values_list("public_id", flat=True))
    assert len(ids) == 5 and len(set(ids)) == 5 and all(isinstance(i, uuid.UUID) for i in ids)
    assert message.objects.get(pk=replied.pk).reply_to_id == asked.pk
    field = message._meta.get_field("public_id")
    assert field.unique and not field.null and field.default is uuid.uuid4
    assert message.objects.create(conversation_id=conversation.pk, role="learner", content="new").public_id not in ids
