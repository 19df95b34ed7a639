"""Sessions are never deleted once planned: `cancelled` (with a reason) and `replaced` (by a
make-up, `replaced_by`) statuses; the audit trail records moves (from_start → to_start) and a
completion's evidence, so the research export can read a closed week as it was when it closed."""

from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    dependencies = [
        ('coaching', '0006_turn_code_text'),
    ]

    operations = [
        migrations.AlterField(
            model_name='plannedsession',
            name='status',
            field=models.CharField(choices=[('planned', 'Planned'), ('completed', 'Completed'), ('skipped', 'Skipped'), ('missed', 'Missed'), ('cancelled', 'Cancelled'), ('replaced', 'Replaced by a make-up')], default='planned', max_length=12),
        ),
        migrations.AddField(
            model_name='plannedsession',
            name='replaced_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='replaces', to='coaching.plannedsession'),
        ),
        migrations.AddField(
            model_name='sessionstatuschange',
            name='completion_source',
            field=models.CharField(blank=True, max_length=12),
        ),
        migrations.AddField(
            model_name='sessionstatuschange',
            name='from_start',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='sessionstatuschange',
            name='to_start',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
