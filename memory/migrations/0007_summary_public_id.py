"""Summaries get a public UUID: a fact's `summary_id` and its history name the summary by it
(the integer key stays inside)."""

from django.db import migrations

from core.migration_ops import public_id_operations


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_fact_public_id")]

    operations = public_id_operations("memory", "summary")
