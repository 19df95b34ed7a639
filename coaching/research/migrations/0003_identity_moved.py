"""Learners and messages now live in `core.identity`, and the session status audit moved to
`coaching` (beside the sessions it audits, written by coaching's one status service). Same tables:
model state only; the database is unchanged."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("research", "0002_enrollment_baseline"), ("identity", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(model_name='enrollment', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='enrollments', to='identity.learner')),
                migrations.AlterField(model_name='calendarfeed', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='calendar_feeds', to='identity.learner')),
                migrations.AlterField(model_name='reminderdelivery', name='learner', field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reminders', to='identity.learner')),
                migrations.AlterField(model_name='reminderdelivery', name='message', field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='identity.message')),
                migrations.DeleteModel(name='SessionStatusChange'),
            ],
        ),
    ]
