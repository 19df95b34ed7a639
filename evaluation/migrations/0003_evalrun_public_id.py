"""Evaluation runs get a public UUID, the id of the export route and of the commands' output
(the integer key stays inside)."""

from django.db import migrations

from core.migration_ops import public_id_operations


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0002_load_core_set")]

    operations = public_id_operations("evaluation", "evalrun")
