"""Conversations now live in `core.identity` (same table): the audit proxy rests on them there.
Model state only; the database is unchanged."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("review", "0001_initial"), ("identity", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name='ConversationAudit'),
                migrations.CreateModel(name='ConversationAudit', fields=[], options={'verbose_name': 'conversation audit', 'verbose_name_plural': 'conversation audits', 'proxy': True, 'indexes': [], 'constraints': []}, bases=('identity.conversation',)),
            ],
        ),
    ]
