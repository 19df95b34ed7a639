"""Plans, check-ins and turns get a public UUID, the `id` of their API responses (the integer key
stays inside)."""

from django.db import migrations

from core.migration_ops import public_id_operations


class Migration(migrations.Migration):
    dependencies = [("coaching", "0004_plannedsession_public_id")]

    operations = [*public_id_operations("coaching", "plan"), *public_id_operations("coaching", "checkin"),
                  *public_id_operations("coaching", "turn")]
