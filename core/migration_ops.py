"""Migration operations shared by the apps: SQL that only PostgreSQL runs, and giving a model a
public UUID.

A client sees a row by its UUID `public_id`, never by the integer key (see docs/api.md). Adding
the column to a table that has rows takes three steps so that every existing row gets a UUID of
its own (a callable default on AddField would hand every row the same one): add it nullable, fill
it row by row in batches, then make it unique, non-null and defaulted."""

from __future__ import annotations

import uuid

from django.db import migrations, models

BATCH = 1000


def _fill(app_label: str, model_name: str):
    def run(apps, schema_editor):
        model = apps.get_model(app_label, model_name)
        rows = []
        for row in model.objects.filter(public_id__isnull=True).only("pk").iterator(chunk_size=BATCH):
            row.public_id = uuid.uuid4()
            rows.append(row)
            if len(rows) == BATCH:
                model.objects.bulk_update(rows, ["public_id"])
                rows = []
        model.objects.bulk_update(rows, ["public_id"])
    return run


def public_id_operations(app_label: str, model_name: str) -> list[migrations.operations.base.Operation]:
    """Add `public_id` to `app_label.model_name`: nullable, filled, then unique with a default.
    The reverse drops the column (the fill has nothing to undo)."""
    return [
        migrations.AddField(model_name=model_name, name="public_id", field=models.UUIDField(null=True, editable=False)),
        migrations.RunPython(_fill(app_label, model_name), migrations.RunPython.noop),
        migrations.AlterField(model_name=model_name, name="public_id",
                              field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
    ]


def postgresql_only(forwards: tuple[str, ...], backwards: tuple[str, ...]) -> migrations.RunPython:
    """Raw SQL run in order on PostgreSQL and skipped elsewhere (SQLite has no pgvector index,
    no generated tsvector): the embedded default migrates the same history."""
    def on_postgresql(statements: tuple[str, ...]):
        def run(apps, schema_editor):
            if schema_editor.connection.vendor == "postgresql":
                for sql in statements:
                    schema_editor.execute(sql)
        return run
    return migrations.RunPython(on_postgresql(forwards), on_postgresql(backwards))

