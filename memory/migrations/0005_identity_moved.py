"""Learners and messages now live in `core.identity` (same tables): the foreign keys point there.
Model state only; the database is unchanged."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory", "0004_fact_occurred_external_metadata"), ("identity", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(model_name='summary', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memory_summaries', to='identity.learner')),
                migrations.AlterField(model_name='fact', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memory_facts', to='identity.learner')),
                migrations.AlterField(model_name='fact', name='source_message', field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='memory_facts', to='identity.message')),
                migrations.AlterField(model_name='entity', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memory_entities', to='identity.learner')),
                migrations.AlterField(model_name='mention', name='message', field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='memory_mentions', to='identity.message')),
                migrations.AlterField(model_name='relation', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memory_relations', to='identity.learner')),
                migrations.AlterField(model_name='extractionrun', name='message', field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='memory_extraction', to='identity.message')),
                migrations.AlterField(model_name='extractionrun', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memory_extractions', to='identity.learner')),
            ],
        ),
    ]
