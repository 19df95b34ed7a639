"""Statements run through core.statements: on PostgreSQL with the pool they are prepared once per
connection (PostgreSQL lists them in pg_prepared_statements and counts their runs), with the
setting off they are not; either way the rows are the same, and a bad statement raises Django's
own database error, as through connection.cursor()."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection
from django.test import override_settings

from core import statements

pytestmark = pytest.mark.django_db

# Prepared statements live as long as the database session, not the test's transaction, and a
# pooled connection can serve several tests: each test marks its statement with its own name so
# what another test prepared is never counted.
SQL = ("SELECT %(a)s::int + n AS total, %(word)s::text AS word FROM generate_series(1, 3) AS n "
       "ORDER BY n /* {mark} */")


def _sql(request) -> str:
    return SQL.format(mark=request.node.name)


def _prepared_runs(request) -> int | None:
    with connection.cursor() as cur:
        cur.execute("SELECT generic_plans + custom_plans FROM pg_prepared_statements WHERE statement LIKE %s",
                    [f"%/* {request.node.name} */%"])
        row = cur.fetchone()
    return None if row is None else row[0]


@pytest.fixture
def postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")


def test_a_statement_is_prepared_once_and_reused(postgresql, request):
    assert statements.prepared_enabled()  # the suite runs with the pool, as production does
    first = statements.fetch_dicts(_sql(request), {"a": 10, "word": "x"})
    again = statements.fetch_dicts(_sql(request), {"a": 20, "word": "y"})
    assert first == [{"total": 11, "word": "x"}, {"total": 12, "word": "x"}, {"total": 13, "word": "x"}]
    assert [r["total"] for r in again] == [21, 22, 23]
    assert _prepared_runs(request) == 2


def test_with_the_setting_off_nothing_is_prepared(postgresql, request):
    with override_settings(BLOOM_DB_PREPARED=False):
        assert not statements.prepared_enabled()
        cols, rows = statements.fetch_rows(_sql(request), {"a": 1, "word": "z"})
    assert cols == ["total", "word"] and rows == [(2, "z"), (3, "z"), (4, "z")]
    assert _prepared_runs(request) is None
    # Asked not to prepare, the setting on changes nothing either.
    statements.fetch_rows(_sql(request), {"a": 1, "word": "z"}, prepare=False)
    assert _prepared_runs(request) is None


def test_a_bad_statement_raises_djangos_database_error(postgresql):
    with pytest.raises(DatabaseError):
        statements.fetch_rows("SELECT no_such_column FROM generate_series(1, 3)", {})


@pytest.mark.parametrize("prepared", [True, False], ids=["prepared", "client-bound"])
def test_column_names_are_the_statements_own_in_order(prepared):
    """Names are read from the result (core.statements._column_names), not from
    cursor.description: the same names, in order, quoted and non-ASCII ones included, on either
    database and either path."""
    sql = 'SELECT 1 AS "zeta", 2 AS alpha, 3 AS "Quoted Name", 4 AS "clé", 5 AS zeta2'
    with override_settings(BLOOM_DB_PREPARED=prepared):
        names, rows = statements.fetch_rows(sql, [])
        assert statements.fetch_dicts(sql, []) == [dict(zip(names, rows[0], strict=True))]
    assert names == ["zeta", "alpha", "Quoted Name", "clé", "zeta2"]
    assert rows == [(1, 2, 3, 4, 5)]
