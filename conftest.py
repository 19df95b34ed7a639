"""Shared fixtures. The suite runs against PostgreSQL + pgvector and Redis (`make test-postgres`)
and a smoke subset against the embedded default (`make test-embedded`, marker `embedded`)."""

from __future__ import annotations

import pytest
from django.conf import settings


@pytest.fixture(scope="session", autouse=True)
def embedded_model_server(tmp_path_factory):
    """The default chat model is reached over HTTP (`openai:` provider), as under `make run`: one
    real model server process (`manage.py model_server`) for the whole session, on a free port.
    Subprocesses the tests start (web, workers) inherit its URL. Not started when the chat model
    is not assembled (tests that need it skip) or when the suite is pointed at another server
    (BLOOM_TEST_MODEL_SERVER=external keeps OPENAI_BASE_URL as given)."""
    import os

    from bloom.tests.reliability import procs
    from core.llm import assets

    if os.environ.get("BLOOM_TEST_MODEL_SERVER") == "external" or \
            not assets.chat_model_path(assets.DEFAULT_CHAT_MODEL).is_file():
        yield None
        return
    port = procs.free_port()
    url = f"http://127.0.0.1:{port}/v1"
    env = {**os.environ, "OPENAI_BASE_URL": url, "LOG_LEVEL": "WARNING", "HF_HUB_OFFLINE": "1"}
    server = procs.model_server(env, port, tmp_path_factory.mktemp("model-server"))
    previous = os.environ.get("OPENAI_BASE_URL"), settings.OPENAI_BASE_URL
    os.environ["OPENAI_BASE_URL"] = settings.OPENAI_BASE_URL = url
    try:
        yield server
    finally:
        server.stop()
        settings.OPENAI_BASE_URL = previous[1]
        if previous[0] is None:
            os.environ.pop("OPENAI_BASE_URL", None)
        else:
            os.environ["OPENAI_BASE_URL"] = previous[0]


@pytest.fixture(scope="session", autouse=True)
def close_connection_pools(django_db_setup, django_db_blocker):
    """The connection pool (BLOOM_DB_POOL_MAX, on by default on PostgreSQL) keeps returned
    connections open, and a daemon thread of a test (a telemetry writer, the access-mark flusher)
    may still hold one: close the pool and end those sessions before pytest-django drops the test
    database, or the drop finds them ("database ... is being accessed by other users") and leaves
    the database behind."""
    yield
    from django.db import connection, connections

    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        for conn in connections.all(initialized_only=True):
            conn.close()
            if hasattr(conn, "close_pool"):
                conn.close_pool()


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
        queues=["memory", "eval", "default"],
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
