"""The identity record (API clients, tokens, learners, conversations, messages) moved here from
`coaching` so that every app can hang off it from below. The tables already exist (created by
coaching's first migration under the same names), so this migration changes Django's model state
only; coaching's 0003 removes the models from its own state once every app points here."""

import django.db.models.deletion
import uuid
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("coaching", "0002_chatlink"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
            migrations.CreateModel(
                name='ApiClient',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('name', models.CharField(max_length=120)),
                    ('is_active', models.BooleanField(default=True)),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('owner', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='api_clients', to=settings.AUTH_USER_MODEL)),
                ],
                options={
                    'db_table': 'coaching_apiclient',
                },
            ),
            migrations.CreateModel(
                name='ApiToken',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('name', models.CharField(blank=True, max_length=120)),
                    ('prefix', models.CharField(db_index=True, max_length=16)),
                    ('key_hash', models.CharField(max_length=64, unique=True)),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('last_used_at', models.DateTimeField(blank=True, null=True)),
                    ('revoked_at', models.DateTimeField(blank=True, null=True)),
                    ('client', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='tokens', to='identity.apiclient')),
                ],
                options={
                    'db_table': 'coaching_apitoken',
                },
            ),
            migrations.CreateModel(
                name='Learner',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('display_name', models.CharField(blank=True, max_length=120)),
                    ('research_id', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                    ('study_arm', models.CharField(choices=[('coach', 'Coach'), ('tracker', 'Tracker (control)')], default='coach', max_length=16)),
                    ('timezone', models.CharField(default='UTC', max_length=64)),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('client', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='learners', to='identity.apiclient')),
                ],
                options={
                    'db_table': 'coaching_learner',
                },
            ),
            migrations.CreateModel(
                name='Conversation',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('learner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='conversations', to='identity.learner')),
                ],
                options={
                    'db_table': 'coaching_conversation',
                    'indexes': [models.Index(fields=['learner', '-created_at'], name='conv_learner_recent_idx')],
                },
            ),
            migrations.CreateModel(
                name='Message',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('role', models.CharField(choices=[('learner', 'Learner'), ('coach', 'Coach'), ('system', 'System')], max_length=10)),
                    ('content', models.TextField()),
                    ('specialist', models.CharField(blank=True, max_length=20)),
                    ('idempotency_key', models.CharField(blank=True, max_length=128, null=True)),
                    ('status', models.CharField(blank=True, choices=[('pending', 'Pending'), ('answered', 'Answered'), ('unanswered', 'Unanswered'), ('', '—')], default='', max_length=12)),
                    ('trace_id', models.CharField(blank=True, db_index=True, max_length=32)),
                    ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                    ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='messages', to='identity.conversation')),
                    ('reply_to', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='replies', to='identity.message')),
                ],
                options={
                    'db_table': 'coaching_message',
                    'indexes': [models.Index(fields=['conversation', '-created_at'], name='msg_conv_recent_idx')],
                    'constraints': [models.UniqueConstraint(condition=models.Q(('idempotency_key__isnull', False)), fields=('conversation', 'idempotency_key'), name='message_idempotency_per_conversation')],
                    'ordering': ['created_at', 'id'],
                },
            ),
            ],
        ),
    ]
