"""Hand-written statements that run on every search, executed as prepared statements.

Django binds parameters on the client and disables psycopg's prepared statements (so that a
transaction-mode connection pooler keeps working), so PostgreSQL parses and plans each statement
every time it runs. The hybrid memory search is one fixed text per shape with new parameters each
time, and planning it cost 1.5 ms against 3.0 ms of execution at ~1,000 facts per learner
(EXPLAIN ANALYZE; memory/README.md, "The web process, prepared statements and the speaker
index"). Here, on PostgreSQL with the connection pool on (the default), it is bound on the
server and prepared once per connection; PostgreSQL then plans it per its plan cache (a generic
plan once that is no worse than the custom plans of the first five runs).

`BLOOM_DB_PREPARED=0` turns this off, for a PgBouncer in transaction mode without
`max_prepared_statements`; without the pool it is off too, since a new connection per request
would prepare every statement for one use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection


def prepared_enabled() -> bool:
    return bool(settings.BLOOM_DB_PREPARED) and connection.vendor == "postgresql"


class _PreparedCursor(psycopg.Cursor):
    """Server-side binding, and every statement prepared on its first run on a connection."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)


def _prepared_cursor() -> Any:
    connection.ensure_connection()
    raw = _PreparedCursor(connection.connection)
    # Wrapped as Django wraps its own cursors: errors mapped to django.db's, queries logged under
    # DEBUG and counted by assertNumQueries, execute_wrapper hooks applied.
    return connection.make_debug_cursor(raw) if connection.queries_logged else connection.make_cursor(raw)


def fetch_rows(sql: str, params: Mapping[str, Any] | Sequence[Any], *,
               prepare: bool = True) -> tuple[list[str], list[tuple]]:
    """The column names and rows of one statement: prepared where `prepare` and
    `prepared_enabled()`, else through Django's cursor (client-side binding; SQLite)."""
    cursor = _prepared_cursor() if prepare and prepared_enabled() else connection.cursor()
    with cursor as cur:
        cur.execute(sql, params)
        return _column_names(cur), cur.fetchall()


def _column_names(cur: Any) -> list[str]:
    """The result's column names. On PostgreSQL read from the result itself, as psycopg's own
    row factories do: `cursor.description` builds a Column object per column on every access
    (type lookup, the connection's encoding read again per column), ~11 % of a web worker's CPU
    on the learner search's 27 columns (py-spy, memory/README.md "Throughput, tenth round")."""
    raw = getattr(cur, "cursor", cur)  # Django's wrapper around the driver's cursor
    result = getattr(raw, "pgresult", None)
    if result is None:  # SQLite, or a statement that returned no result
        return [c[0] for c in cur.description]
    encoding = raw.connection.info.encoding
    return [result.fname(i).decode(encoding) for i in range(result.nfields)]


def fetch_dicts(sql: str, params: Mapping[str, Any] | Sequence[Any], *,
                prepare: bool = True) -> list[dict[str, Any]]:
    """The rows of one statement as dicts by column name (see `fetch_rows`)."""
    cols, rows = fetch_rows(sql, params, prepare=prepare)
    return [dict(zip(cols, row, strict=True)) for row in rows]
