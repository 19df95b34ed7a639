"""Planned sessions get a public UUID, the id a client sees in URLs and responses
(the integer key stays inside). Existing rows each get their own UUID: the column is added
nullable, filled row by row, then made unique and non-null."""

import uuid

from django.db import migrations, models

BATCH = 1000


def fill(model_name):
    def run(apps, schema_editor):
        model = apps.get_model("coaching", model_name)
        rows = []
        for row in model.objects.filter(public_id__isnull=True).only("pk").iterator(chunk_size=BATCH):
            row.public_id = uuid.uuid4()
            rows.append(row)
            if len(rows) == BATCH:
                model.objects.bulk_update(rows, ["public_id"])
                rows = []
        model.objects.bulk_update(rows, ["public_id"])
    return run


class Migration(migrations.Migration):
    dependencies = [("coaching", "0003_identity_moved")]

    operations = []
    for name in ("plannedsession",):
        operations += [
            migrations.AddField(model_name=name, name="public_id", field=models.UUIDField(null=True, editable=False)),
            migrations.RunPython(fill(name), migrations.RunPython.noop),
            migrations.AlterField(model_name=name, name="public_id",
                                  field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
        ]
