"""Shared fixtures. The suite runs against PostgreSQL + pgvector and Redis (`make test-postgres`)
and a smoke subset against the embedded default (`make test-embedded`, marker `embedded`)."""

from __future__ import annotations

import pytest
from django.conf import settings


@pytest.fixture(scope="session")
def celery_app_real():
    from bloom.celery import app

    return app


@pytest.fixture
def real_celery_worker(transactional_db, celery_app_real):
    """A real Celery worker consuming from the configured broker (Redis under `make test`), in a
    thread of this process. Use with `transactional_db`: the worker sees committed rows only."""
    from celery.contrib.testing.worker import start_worker

    celery_app_real.conf.task_always_eager = False
    with start_worker(
        celery_app_real,
        pool="solo",
        concurrency=1,
        perform_ping_check=False,
        queues=["llm", "memory", "eval", "default"],
        shutdown_timeout=30,
    ) as worker:
        yield worker


@pytest.fixture
def requires_postgres():
    if settings.DB_VENDOR != "postgresql":
        pytest.skip("needs PostgreSQL (run under `make test-postgres`)")


@pytest.fixture
def broker_down(monkeypatch):
    """Point the outbox's Celery app at a broker nobody listens on (publishing fails fast).
    Celery lets the CELERY_BROKER_URL variable override an app's broker argument: set both.
    `monkeypatch.undo()` brings the real broker back."""
    from celery import Celery

    import bloom.celery

    down_url = "redis://127.0.0.1:6399/0"
    monkeypatch.setenv("CELERY_BROKER_URL", down_url)
    down = Celery("bloom-broker-down", broker=down_url, set_as_current=False)
    down.conf.broker_connection_timeout = 1
    down.conf.broker_transport_options = {"max_retries": 0}
    monkeypatch.setattr(bloom.celery, "app", down)
    return down
