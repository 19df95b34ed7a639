"""Chat first, the rest in the background: `bloom_models --for-chat` / `--background`, what /healthz
says meanwhile, and the supervisor's one-shot `prepare` process. The background step runs for
real on the models `make test` prepared (present: verified, not rebuilt); a failing training is
scripted (it takes 5 minutes for real, and its own failures are tested in test_entity_training)."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest
from django.core.management import call_command

from core import model_prep
from core.entity_training import build
from core.outbox.models import OutboxMessage

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_healthz_says_what_is_still_being_prepared_and_then_what_failed(client, settings, var_dir):
    settings.BLOOM_ENTITY_MODEL = str(var_dir / "entity-model-not-built-yet")
    model_prep.mark("entities", "running")
    body = client.get("/healthz").json()
    entities = body["parts"]["entities"]
    assert entities["ok"] is True and entities["preparing"] is True
    assert "being prepared in the background" in entities["reason"] and "GLiNER" in entities["reason"]
    assert "get their entities when it is ready" in entities["reason"]
    assert body["preparing"] == ["entities"]
    assert set(body["models"]) == {"chat", "extraction", "summary", "judge"}

    model_prep.mark("entities", "failed", error="entities: training diverged")
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503 and body["parts"]["entities"]["ok"] is False
    assert "the background step failed to build it: entities: training diverged" in body["parts"]["entities"]["reason"]
    assert body["preparing"] == []


def test_a_missing_entity_model_nobody_is_preparing_is_a_failure(client, settings, var_dir):
    settings.BLOOM_ENTITY_MODEL = str(var_dir / "never-built")
    response = client.get("/healthz")
    assert response.status_code == 503 and response.json()["parts"]["entities"]["ok"] is False


def test_for_chat_builds_chat_and_records_the_background_parts(var_dir):
    out = io.StringIO()
    call_command("bloom_models", "--for-chat", "--model", "qwen2.5-coder-0.5b-instruct-q4", "--no-progress", stdout=out)
    text = out.getvalue()
    assert "qwen2.5-coder-0.5b-instruct-q4: present" in text and "smoke:" in text
    assert "queued for `bloom_models --background`" in text
    # make test built everything: nothing is left for the background, so nothing is "queued".
    assert {part: record["state"] for part, record in model_prep.read_status().items()} == \
        {"entities": "done", "query_embeddings": "done"}


def test_background_step_records_each_part_and_queues_the_entity_catch_up(var_dir):
    out = io.StringIO()
    call_command("bloom_models", "--background", "--no-progress", stdout=out)
    assert {part: record["state"] for part, record in model_prep.read_status().items()} == \
        {"entities": "done", "query_embeddings": "done"}
    assert OutboxMessage.objects.filter(task_name="memory.entities_catch_up", queue="memory").count() == 1
    assert "catch-up queued" in out.getvalue()


def test_a_failed_background_part_is_recorded_and_the_step_still_exits_cleanly(var_dir, monkeypatch):
    def fails(*args, **kwargs):
        raise build.EntityModelError("entities: held-out F1 0.12 is below the floor (scripted failure)")

    monkeypatch.setattr(build, "ensure_entity_model", fails)
    err = io.StringIO()
    call_command("bloom_models", "--background", "--no-progress", stdout=io.StringIO(), stderr=err)
    status = model_prep.read_status()
    assert status["entities"]["state"] == "failed" and "below the floor" in status["entities"]["error"]
    assert status["query_embeddings"]["state"] == "done"  # one failed part does not stop the other
    assert "entities: failed:" in err.getvalue()


def test_the_supervisor_runs_prepare_once_and_restarts_the_servers(tmp_path):
    spec = importlib.util.spec_from_file_location("supervise", ROOT / "scripts" / "supervise.py")
    supervise = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(supervise)
    processes = supervise.read_procfile(ROOT / "Procfile")
    assert "bloom_models --background" in processes["prepare"]
    config = supervise.supervisord_config(processes, var_dir=tmp_path)
    sections = {block.split("]", 1)[0]: block for block in config.split("[program:")[1:]}
    assert "autorestart=unexpected" in sections["prepare"] and "exitcodes=0" in sections["prepare"]
    assert "autorestart=true" in sections["model"] and "autorestart=true" in sections["web"]
