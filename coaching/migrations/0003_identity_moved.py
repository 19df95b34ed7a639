"""The identity record (API clients, tokens, learners, conversations, messages) moved to
`core.identity`, and the session status audit moved here from research. Same tables: model state
only; the database is unchanged. Runs after every app that pointed at the moved models points at
their new home."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("coaching", "0002_chatlink"),
        ("identity", "0001_initial"),
        ("memory", "0005_identity_moved"),
        ("research", "0003_identity_moved"),
        ("review", "0002_identity_moved"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(model_name='learnerprofile', name='learner', field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='profile', to='identity.learner')),
                migrations.AlterField(model_name='plan', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='plans', to='identity.learner')),
                migrations.AlterField(model_name='checkin', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='checkins', to='identity.learner')),
                migrations.AlterField(model_name='checkin', name='message', field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='checkins', to='identity.message')),
                migrations.AlterField(model_name='turn', name='learner_message', field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='turn', to='identity.message')),
                migrations.AlterField(model_name='turn', name='reply', field=models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='produced_by_turn', to='identity.message')),
                migrations.AlterField(model_name='chatlink', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chat_links', to='identity.learner')),
                migrations.CreateModel(
                    name='SessionStatusChange',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('from_status', models.CharField(max_length=12)),
                        ('to_status', models.CharField(max_length=12)),
                        ('source', models.CharField(max_length=20)),
                        ('detail', models.CharField(blank=True, max_length=200)),
                        ('changed_at', models.DateTimeField(auto_now_add=True)),
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='status_changes', to='coaching.plannedsession')),
                    ],
                    options={'db_table': 'research_sessionstatuschange'},
                ),
                migrations.DeleteModel(name='Message'),
                migrations.DeleteModel(name='Conversation'),
                migrations.DeleteModel(name='ApiToken'),
                migrations.DeleteModel(name='Learner'),
                migrations.DeleteModel(name='ApiClient'),
            ],
        ),
    ]
