"""Planned sessions get a public UUID, the id a client sees in URLs and responses
(the integer key stays inside). Existing rows each get their own UUID: the column is added
nullable, filled row by row, then made unique and non-null."""

from django.db import migrations

from core.migration_ops import public_id_operations


class Migration(migrations.Migration):
    dependencies = [("coaching", "0003_identity_moved")]

    operations = [*public_id_operations("coaching", "plannedsession")]
