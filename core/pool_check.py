"""The health check a pooled PostgreSQL connection gets when a request borrows it.

Django's pool check (CONN_HEALTH_CHECKS) sends an empty query on every checkout: one more round
trip to PostgreSQL per request, 7 % of a web worker's time under the memory search load
(py-spy, memory/README.md "Hubness" round). A connection the server has closed (a terminated
backend, a restart) has had its socket closed by the server, and an idle healthy connection has
nothing to read; so the socket is polled first, without waiting, and only a connection with
something to read (or already marked closed) gets the round-trip check, which then raises if it
is dead and the pool replaces it. A connection cut off without the server closing it (a network
partition) is not found here; the empty query would only have waited on it for the TCP timeout.
"""

from __future__ import annotations

import select
from typing import Any

from psycopg import Connection
from psycopg_pool import ConnectionPool


def check_pooled_connection(conn: Connection) -> None:
    """Raise if the connection is dead (psycopg_pool then discards it and takes another)."""
    if conn.closed or conn.broken:
        raise ConnectionError("connection closed")
    poller = select.poll()  # not select.select: it fails on descriptors above 1023
    poller.register(conn.fileno(), select.POLLIN)
    if poller.poll(0):  # readable, closed or in error
        ConnectionPool.check_connection(conn)


def install_on_pool(sender: Any, connection: Any, **kwargs: Any) -> None:
    """`connection_created` receiver: give Django's pool this check. Django builds its pool with
    `check=` from CONN_HEALTH_CHECKS and no way to pass another, and rebuilds it when the
    database settings change (the test database), so the check is set whenever a connection is
    made. `_check` is psycopg_pool's (pinned in requirements.txt; core/tests/test_pool_check.py
    fails if it stops being used)."""
    pool = getattr(connection, "pool", None) if connection.vendor == "postgresql" else None
    if pool is not None and pool._check is not check_pooled_connection:
        pool._check = check_pooled_connection
