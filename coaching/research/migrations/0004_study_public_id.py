"""Studies get a public UUID, the id of the export route and the export file name (the integer
key stays inside: the participant-id HMAC and the date shift are keyed by it and do not change)."""

from django.db import migrations

from core.migration_ops import public_id_operations


class Migration(migrations.Migration):
    dependencies = [("research", "0003_identity_moved")]

    operations = public_id_operations("research", "study")
