"""Messages get a public UUID, the id a client sees wherever a message is named (a message's `id`
and `reply_to`, stream frames, check-ins, turns, a fact's source); the integer key stays inside.
Existing rows each get their own UUID (add nullable, fill, make unique: core.migration_ops)."""

from django.db import migrations

from core.migration_ops import public_id_operations


class Migration(migrations.Migration):
    dependencies = [("identity", "0002_public_ids")]

    operations = public_id_operations("identity", "message")
