"""The pooled connection check (core/pool_check.py) against the real PostgreSQL server: no round
trip for a healthy idle connection, a terminated backend found and replaced."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from psycopg_pool import ConnectionPool

from core.pool_check import check_pooled_connection

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(settings.DB_VENDOR != "postgresql", reason="PostgreSQL connection pool")]


def _params() -> dict:
    connection.ensure_connection()
    return {**connection.get_connection_params(), "autocommit": True}


def _terminate(pid: int) -> None:
    with psycopg.connect(**_params()) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0]


def test_the_pool_uses_this_check_instead_of_a_round_trip(monkeypatch):
    connection.ensure_connection()
    assert connection.pool._check is check_pooled_connection
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is False
    # A request's checkout: no empty query sent for the healthy pooled connection.
    sent = []
    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(sent.append))
    connection.close()  # back to the pool
    connection.ensure_connection()  # borrowed again, checked
    assert sent == [] and connection.pool._check is check_pooled_connection
    # psycopg_pool still calls `_check` on a checkout (it is private API: this is the canary).
    calls = []
    monkeypatch.setattr(connection.pool, "_check", calls.append)
    connection.close()
    connection.ensure_connection()
    assert len(calls) == 1


def test_a_healthy_idle_connection_is_not_sent_a_query(monkeypatch):
    sent = []
    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(sent.append))
    with psycopg.connect(**_params()) as conn:
        conn.execute("SELECT 1").fetchone()
        check_pooled_connection(conn)
    assert sent == []


def test_a_terminated_backend_fails_the_check():
    conn = psycopg.connect(**_params())
    try:
        _terminate(conn.info.backend_pid)
        deadline = time.monotonic() + 5
        while True:  # the server's close reaches the socket a moment after pg_terminate_backend
            try:
                check_pooled_connection(conn)
            except psycopg.OperationalError:
                break
            assert time.monotonic() < deadline, "a terminated connection passed the check"
            time.sleep(0.05)
    finally:
        conn.close()
    with pytest.raises(ConnectionError):
        check_pooled_connection(conn)  # closed on our side too


def test_the_pool_replaces_a_terminated_connection():
    with ConnectionPool(kwargs=_params(), min_size=1, max_size=1, check=check_pooled_connection, open=True) as pool:
        with pool.connection() as conn:
            first = conn.info.backend_pid
        _terminate(first)
        time.sleep(0.2)
        with pool.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.backend_pid != first
