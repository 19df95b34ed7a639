"""GET /healthz: one entry per part, each ok or failed with a reason; 503 when one is down."""

from __future__ import annotations

import pytest

PARTS = {"database", "broker", "llm", "embeddings", "entities"}


def _assert_shape(body: dict) -> None:
    assert body["status"] in ("ok", "degraded")
    assert set(body["parts"]) >= PARTS
    for name, part in body["parts"].items():
        assert isinstance(part["ok"], bool), name
        assert isinstance(part["reason"], str) and part["reason"], name
    assert isinstance(body["parts"]["database"]["vector"], bool)


@pytest.mark.django_db
def test_healthz_all_parts_ok_on_the_suite_services(client, requires_postgres):
    response = client.get("/healthz")
    body = response.json()
    _assert_shape(body)
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["parts"]["database"]["vector"] is True


@pytest.mark.django_db
def test_healthz_is_503_and_names_the_part_when_the_broker_is_down(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6399/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    _assert_shape(body)
    assert body["status"] == "degraded"
    assert body["parts"]["broker"]["ok"] is False
    assert "unreachable" in body["parts"]["broker"]["reason"]
    assert body["parts"]["database"]["ok"] is True


@pytest.mark.embedded
@pytest.mark.django_db
def test_healthz_embedded_default(client, settings):
    assert settings.DB_VENDOR == "sqlite" and settings.CELERY_BROKER_URL.startswith("filesystem://")
    response = client.get("/healthz")
    body = response.json()
    _assert_shape(body)
    assert response.status_code == 200, body
    assert body["parts"]["database"]["reason"].startswith("sqlite")
    assert body["parts"]["broker"]["reason"].startswith("filesystem broker")
