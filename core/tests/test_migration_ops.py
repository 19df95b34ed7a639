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
