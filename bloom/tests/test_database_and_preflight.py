"""The suite's database is PostgreSQL with pgvector; preflight refuses a database without it and
an unreachable Redis, each with one line naming the variable."""

from __future__ import annotations

import uuid
from urllib.parse import urlparse, urlunparse

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from bloom.tests._subprocess import run_manage


@pytest.mark.django_db
def test_test_database_is_postgresql_with_vector_extension(requires_postgres):
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
        assert row is not None, "the test database has no 'vector' extension"
        # The type is usable, not just registered: cosine distance of two vectors.
        cursor.execute("SELECT '[1,0,0]'::vector <=> '[0,1,0]'::vector")
        assert cursor.fetchone()[0] == pytest.approx(1.0)


def _url_with_db(url: str, dbname: str) -> str:
    return urlunparse(urlparse(url)._replace(path=f"/{dbname}"))


@pytest.fixture
def database_without_pgvector(requires_postgres):
    """A fresh database created from template0: template1 has `vector` on this machine, so a
    plain CREATE DATABASE would inherit the extension and prove nothing."""
    admin_url = settings.DATABASE_URL
    name = f"bloom_novector_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_url_with_db(admin_url, "postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    try:
        yield _url_with_db(admin_url, name)
    finally:
        with psycopg.connect(_url_with_db(admin_url, "postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _failure_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one error line, got:\n{result.stderr}"
    return lines[0]


def test_preflight_refuses_postgresql_without_pgvector(database_without_pgvector):
    result = run_manage("preflight", "--skip-models", env={"DATABASE_URL": database_without_pgvector})
    assert result.returncode != 0
    line = _failure_line(result)
    assert "DATABASE_URL" in line and "vector" in line
    assert "FAIL database" in result.stdout


def test_preflight_refuses_unreachable_redis(requires_postgres):
    # Nothing listens on 6399: the production broker is down.
    result = run_manage("preflight", "--skip-models", env={"CELERY_BROKER_URL": "redis://127.0.0.1:6399/0"})
    assert result.returncode != 0
    line = _failure_line(result)
    assert "CELERY_BROKER_URL" in line and "broker" in line
    assert "ok   database" in result.stdout  # only the broker is blamed


def test_preflight_passes_on_the_suite_services(requires_postgres):
    result = run_manage("preflight", "--skip-models", env={})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   database" in result.stdout and "vector" in result.stdout
    assert "ok   broker" in result.stdout
