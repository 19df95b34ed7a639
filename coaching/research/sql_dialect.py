"""The two SQL dialects the adherence query is written for (coaching.research.adherence).

A local date on PostgreSQL is `(ts AT TIME ZONE tz)::date`, which uses the server's tz database
and so is right across DST changes. SQLite has no tz database: there the same query calls
`bloom_local_date(ts, tz)`, a deterministic SQL function registered on the connection that
converts with Python's `zoneinfo` (also DST-correct). Everything else is the same SQL text."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import ZoneInfo

from django.db import connection


@lru_cache(maxsize=512)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def _sqlite_local_date(ts: str | None, tz: str | None) -> str | None:
    """SQLite fallback for `(ts AT TIME ZONE tz)::date`. Django stores naive UTC text there."""
    if ts is None:
        return None
    value = dt.datetime.fromisoformat(ts)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(zone(tz or "UTC")).date().isoformat()


def _sqlite_week_close(day: str | None, tz: str | None, hours: int) -> str | None:
    """SQLite fallback for `(day::timestamp AT TIME ZONE tz) + hours`: local midnight of `day` in
    `tz`, plus `hours`, as naive UTC text (what Django stores there)."""
    if day is None:
        return None
    local = dt.datetime.combine(dt.date.fromisoformat(day), dt.time(0, 0), tzinfo=zone(tz or "UTC"))
    return (local.astimezone(dt.UTC) + dt.timedelta(hours=hours)).replace(tzinfo=None).isoformat(sep=" ")


def ensure_sqlite_functions() -> None:
    connection.ensure_connection()
    connection.connection.create_function("bloom_local_date", 2, _sqlite_local_date, deterministic=True)
    connection.connection.create_function("bloom_week_close", 3, _sqlite_week_close, deterministic=True)


@dataclass(frozen=True)
class Dialect:
    postgres: bool

    def local_date(self, ts: str, tz: str) -> str:
        if self.postgres:
            return f"(({ts}) AT TIME ZONE {tz})::date"
        return f"bloom_local_date({ts}, {tz})"

    def study_week(self, date_expr: str) -> str:
        """Study week number of a local date: 1 for the ISO week containing the study start."""
        if self.postgres:
            # Both sides are Mondays, so the integer division is exact (no truncation issue).
            return f"((date_trunc('week', {date_expr})::date - %(monday)s::date) / 7 + 1)"
        monday = f"date({date_expr}, '-6 days', 'weekday 1')"
        return f"(CAST(julianday({monday}) - julianday(%(monday)s) AS INTEGER) / 7 + 1)"

    def next_monday(self, date_expr: str) -> str:
        """The Monday after the ISO week of a local date (the week's exclusive end)."""
        if self.postgres:
            return f"(date_trunc('week', {date_expr})::date + 7)"
        return f"date({date_expr}, '-6 days', 'weekday 1', '+7 days')"

    def week_number_end(self, week_expr: str) -> str:
        """The Monday after study week `week_expr` (a local date)."""
        if self.postgres:
            return f"(%(monday)s::date + 7 * ({week_expr}))"
        return f"date(%(monday)s, '+' || (7 * ({week_expr})) || ' days')"

    def week_close(self, monday_expr: str, tz: str) -> str:
        """The instant a week closes: local midnight of the Monday after it (`monday_expr`), in
        time zone `tz` (DST-aware), plus the close grace (%(close_hours)s)."""
        if self.postgres:
            return f"((({monday_expr})::timestamp AT TIME ZONE {tz}) + %(close_hours)s * INTERVAL '1 hour')"
        return f"bloom_week_close({monday_expr}, {tz}, %(close_hours)s)"

    @property
    def as_of(self) -> str:
        # Cast so PostgreSQL reads the parameter as a timestamptz, not unknown text.
        return "CAST(%(as_of)s AS timestamptz)" if self.postgres else "%(as_of)s"

    def before(self, a: str, b: str, *, or_equal: bool = False) -> str:
        op = "<=" if or_equal else "<"
        # SQLite keeps timestamps as text whose format can differ (fractional seconds, offset):
        # compare them as numbers.
        return f"{a} {op} {b}" if self.postgres else f"julianday({a}) {op} julianday({b})"

    def due(self, start: str, minutes: str) -> str:
        """The session's planned start + duration + grace has passed at the export time."""
        if self.postgres:
            return f"{start} + ({minutes} + %(grace)s) * INTERVAL '1 minute' <= {self.as_of}"
        return f"julianday({start}) + ({minutes} + %(grace)s) / 1440.0 <= julianday({self.as_of})"

    def greatest(self, a: str, b: str) -> str:
        return f"GREATEST({a}, {b})" if self.postgres else f"MAX({a}, {b})"

    def least(self, a: str, b: str) -> str:
        return f"LEAST({a}, {b})" if self.postgres else f"MIN({a}, {b})"

    def null(self, sql_type: str) -> str:
        # PostgreSQL resolves UNION column types pairwise: an untyped NULL would become text.
        return f"CAST(NULL AS {sql_type})" if self.postgres else "NULL"
