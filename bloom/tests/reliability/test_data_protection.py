"""Data protection, tested: erasure cascades and anonymises telemetry, message-content retention,
secrets only from the environment, and `check --deploy` clean with production settings."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from bloom.tests.reliability.procs import ROOT

pytestmark = pytest.mark.django_db


def _telemetry_row(learner, conversation, content="I swim on Mondays"):
    from telemetry.models import ModelCall

    return ModelCall.objects.create(call_id=secrets.token_hex(16), operation="chat", provider="fake",
                                    request_model="m", learner_id=learner.pk, conversation_id=conversation.pk,
                                    prompt_content=content, response_content=content, created_at=timezone.now())


def _learner_rows(learner) -> dict[str, int]:
    from coaching.models import CheckIn, Conversation, LearnerProfile, Message, Plan, PlannedSession, Turn
    from memory.models import Entity, Fact, Summary

    return {
        "profile": LearnerProfile.objects.filter(learner_id=learner.pk).count(),
        "conversations": Conversation.objects.filter(learner_id=learner.pk).count(),
        "messages": Message.objects.filter(conversation__learner_id=learner.pk).count(),
        "turns": Turn.objects.filter(learner_message__conversation__learner_id=learner.pk).count(),
        "plans": Plan.objects.filter(learner_id=learner.pk).count(),
        "sessions": PlannedSession.objects.filter(plan__learner_id=learner.pk).count(),
        "checkins": CheckIn.objects.filter(learner_id=learner.pk).count(),
        "facts": Fact.objects.filter(learner_id=learner.pk).count(),
        "embeddings": Fact.objects.filter(learner_id=learner.pk, embedding__isnull=False).count(),
        "summaries": Summary.objects.filter(learner_id=learner.pk).count(),
        "entities": Entity.objects.filter(learner_id=learner.pk).count(),
    }


def test_erasing_a_learner_cascades_and_anonymises_telemetry(tenants):
    from coaching.models import Learner
    from telemetry.models import ModelCall

    a, b = tenants
    row = _telemetry_row(a.learner, a.conversation)
    by_conversation = _telemetry_row(a.learner, a.conversation)
    ModelCall.objects.filter(pk=by_conversation.pk).update(learner_id=None)  # e.g. a call made outside a learner ctx
    other = _telemetry_row(b.learner, b.conversation)
    before = _learner_rows(a.learner)
    assert all(before.values()), f"the fixture must populate every kind of row: {before}"
    b_before = _learner_rows(b.learner)

    response = a.api.delete(f"/api/v1/learners/{a.learner.research_id}")
    assert response.status_code == 204, response.content

    assert not Learner.objects.filter(pk=a.learner.pk).exists()
    after = _learner_rows(a.learner)
    assert not any(after.values()), after
    for pk in (row.pk, by_conversation.pk):
        call = ModelCall.objects.get(pk=pk)  # kept for aggregates ...
        assert call.learner_id is None and call.conversation_id is None  # ... but anonymous
        assert call.prompt_content == "" and call.response_content == ""
    untouched = ModelCall.objects.get(pk=other.pk)
    assert untouched.learner_id == b.learner.pk and untouched.prompt_content
    assert _learner_rows(b.learner) == b_before, "another learner lost data"
    # Another client cannot erase B.
    assert a.api.delete(f"/api/v1/learners/{b.learner.research_id}").status_code in (401, 404)


def test_retention_blanks_old_message_text_and_keeps_counts(tenants):
    from bloom.retention import messages_blank_expired
    from coaching.models import Message, Turn
    from telemetry.models import ModelCall

    a, _ = tenants
    old = timezone.now() - timedelta(days=40)
    call = _telemetry_row(a.learner, a.conversation)
    ModelCall.objects.filter(pk=call.pk).update(created_at=old)
    Turn.objects.filter(pk=a.turn.pk).update(created_at=old, context_snapshot="About the learner: swims")
    Message.objects.filter(pk__in=[a.message.pk, a.reply.pk]).update(created_at=old)
    fresh = Message.objects.create(conversation=a.conversation, role="learner", content="new text", status="answered")
    total = Message.objects.count()

    assert messages_blank_expired(days=0) == {"messages": 0, "turns": 0, "telemetry": 0}, "0 keeps forever"
    counts = messages_blank_expired(days=30)
    assert counts == {"messages": 2, "turns": 1, "telemetry": 1}, counts
    assert Message.objects.count() == total, "rows and counts stay"
    assert set(Message.objects.filter(pk__in=[a.message.pk, a.reply.pk]).values_list("content", flat=True)) == {""}
    assert Message.objects.get(pk=a.message.pk).status == "answered"
    assert Message.objects.get(pk=fresh.pk).content == "new text"
    assert Turn.objects.get(pk=a.turn.pk).context_snapshot == ""
    assert ModelCall.objects.get(pk=call.pk).prompt_content == ""
    assert messages_blank_expired(days=30) == {"messages": 0, "turns": 0, "telemetry": 0}, "idempotent"


def test_retention_runs_as_a_registered_periodic_task(settings):
    from django_celery_beat.models import PeriodicTask

    from bloom.celery import app
    from bloom.retention import PERIODIC_TASK_ROW, TASK_NAME, register_periodic_task

    app.loader.import_default_modules()
    assert TASK_NAME in app.tasks
    register_periodic_task()
    register_periodic_task()  # idempotent
    rows = PeriodicTask.objects.filter(name=PERIODIC_TASK_ROW)
    assert rows.count() == 1 and rows.get().task == TASK_NAME
    settings.BLOOM_MESSAGE_RETENTION_DAYS = 0
    assert app.tasks[TASK_NAME].apply().result == {"messages": 0, "turns": 0, "telemetry": 0}


def _manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG", "ALLOWED_HOSTS")
            and not k.startswith("BLOOM_TEST_")}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=180)


def test_production_settings_refuse_to_start_without_a_secret_from_the_environment():
    result = _manage("check", env={"DEBUG": "0", "ALLOWED_HOSTS": "bloom.example"})
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stdout + result.stderr


def test_check_deploy_is_clean_with_production_settings():
    env = {"DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "bloom.example",
           "DATABASE_URL": os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bloom"),
           "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")}
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_secrets_and_service_addresses_come_from_the_environment():
    """Every secret-bearing setting takes the value the environment gives it: settings loaded in a
    fresh process with random values must show exactly those values (a hard-coded key, password or
    address would not follow). The dev key is refused when DEBUG is off (tested above)."""
    secret, password = secrets.token_urlsafe(40), secrets.token_hex(8)
    env = {"DEBUG": "0", "SECRET_KEY": secret, "ALLOWED_HOSTS": "bloom.example",
           "DATABASE_URL": f"postgres://bloom_{password[:4]}:{password}@db.invalid:6543/bloom_{password[:6]}",
           "CELERY_BROKER_URL": f"redis://:{password}@broker.invalid:6390/3"}
    script = ("import django, json; django.setup(); from django.conf import settings as s; "
              "d = s.DATABASES['default']; print(json.dumps([s.SECRET_KEY, d['PASSWORD'], d['HOST'], d['NAME'], "
              "s.CELERY_BROKER_URL]))")
    base = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG", "ALLOWED_HOSTS")}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**base, **env, "DJANGO_SETTINGS_MODULE": "bloom.settings"})
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == [secret, password, "db.invalid", f"bloom_{password[:6]}", env["CELERY_BROKER_URL"]]
