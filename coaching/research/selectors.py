"""Reads. The adherence query is one SQL statement over the whole study (no per-learner loop).

Weeks. A session belongs to the ISO week (Monday start) of its LOCAL start time in the learner's
time zone; study week 1 is the ISO week containing `Study.start_date`. On PostgreSQL the local
date is `(ts AT TIME ZONE learner.timezone)::date`, which uses the server's tz database and so is
right across DST changes. SQLite has no tz database: there the same query calls
`bloom_local_date(ts, tz)`, a deterministic SQL function registered on the connection that converts
with Python's `zoneinfo` (also DST-correct). Everything else is the same SQL text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import ZoneInfo

from django.db import connection
from django.utils import timezone

from coaching.models import CheckIn, Conversation, Learner, LearnerProfile, Message, Plan, PlannedSession
from coaching.research.conf import ADHERENT_THRESHOLD
from coaching.research.models import CalendarFeed, Enrollment, Study

FETCH_SIZE = 2000


# --- calendar ----------------------------------------------------------------------------------

def calendar_subscription_confirmed(learner_id: int) -> bool:
    """True only when a live (unrevoked) feed exists AND the learner confirmed subscribing to it.
    The coach must not say "it's in your calendar" otherwise. Called lazily by coaching."""
    return CalendarFeed.objects.filter(
        learner_id=learner_id, revoked_at__isnull=True, subscription_confirmed_at__isnull=False
    ).exists()


def calendar_feed_by_token_hash(token_hash: str) -> CalendarFeed | None:
    return CalendarFeed.objects.filter(token_hash=token_hash, revoked_at__isnull=True).select_related("learner").first()


def calendar_feed_sessions(*, learner_id: int, since: dt.datetime) -> list[PlannedSession]:
    return list(
        PlannedSession.objects.filter(plan__learner_id=learner_id, planned_start__gte=since).order_by("planned_start")
    )


# --- studies -----------------------------------------------------------------------------------

def study_monday(study: Study) -> dt.date:
    return study.start_date - dt.timedelta(days=study.start_date.weekday())


def active_enrollment_for_learner(learner_id: int) -> Enrollment | None:
    return (
        Enrollment.objects.filter(learner_id=learner_id, withdrawn_at__isnull=True)
        .select_related("study").order_by("-enrolled_at").first()
    )


def study_enrollment_counts(study: Study) -> dict[str, dict[str, int]]:
    """Per arm: enrolled, withdrawn (drop-outs), active."""
    out: dict[str, dict[str, int]] = {arm: {"enrolled": 0, "withdrawn": 0, "active": 0} for arm in study.arms}
    for e in Enrollment.objects.filter(study=study).values("arm", "withdrawn_at"):
        row = out.setdefault(e["arm"], {"enrolled": 0, "withdrawn": 0, "active": 0})
        row["enrolled"] += 1
        row["withdrawn" if e["withdrawn_at"] else "active"] += 1
    return out


# --- adherence ---------------------------------------------------------------------------------

@lru_cache(maxsize=512)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def _sqlite_local_date(ts: str | None, tz: str | None) -> str | None:
    """SQLite fallback for `(ts AT TIME ZONE tz)::date`. Django stores naive UTC text there."""
    if ts is None:
        return None
    value = dt.datetime.fromisoformat(ts)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(_zone(tz or "UTC")).date().isoformat()


def _ensure_sqlite_functions() -> None:
    connection.ensure_connection()
    connection.connection.create_function("bloom_local_date", 2, _sqlite_local_date, deterministic=True)


@dataclass(frozen=True)
class _Dialect:
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

    def greatest(self, a: str, b: str) -> str:
        return f"GREATEST({a}, {b})" if self.postgres else f"MAX({a}, {b})"

    def least(self, a: str, b: str) -> str:
        return f"LEAST({a}, {b})" if self.postgres else f"MIN({a}, {b})"


ADHERENCE_COLUMNS = [
    "learner_id", "research_id", "arm", "study_week", "date_shift_days",
    "planned_sessions", "completed_sessions", "planned_minutes", "completed_minutes",
    "adherence_ratio", "adherent", "checkins", "active_days", "last_active_week",
    "goal_category", "weekly_hours", "best_time", "confidence",
]


def adherence_sql(postgres: bool) -> str:
    """One statement, shaped so no plan can degrade into a nested loop over two large inputs:
    every fact (session, completion day, check-in, learner message, and one "grid" row per
    participant-week that must appear) becomes a row of one UNION ALL keyed by (learner, study
    week), aggregated once. Fact branches join base tables by primary key or indexed foreign key
    only, and enrolment attributes ride on the grid rows, so fresh data without planner
    statistics (a bulk import exported right away) cannot produce a quadratic plan."""
    d = _Dialect(postgres)
    t = {
        "enrollment": Enrollment._meta.db_table, "learner": Learner._meta.db_table,
        "profile": LearnerProfile._meta.db_table, "plan": Plan._meta.db_table,
        "session": PlannedSession._meta.db_table, "checkin": CheckIn._meta.db_table,
        "message": Message._meta.db_table, "conversation": Conversation._meta.db_table,
    }
    pct = round(ADHERENT_THRESHOLD * 100)
    in_study = f"IN (SELECT learner_id FROM {t['enrollment']} WHERE study_id = %(study_id)s)"  # noqa: S608
    null_date = "CAST(NULL AS DATE)" if postgres else "NULL"
    null_text = "CAST(NULL AS TEXT)" if postgres else "NULL"
    null_int = "CAST(NULL AS BIGINT)" if postgres else "NULL"  # all-NULL union columns would become text
    research_id = "l.research_id::text" if postgres else "l.research_id"
    # Every facts branch has the columns: learner_id, wk, planned, completed, pmin, cmin, checkin,
    # day, grid, enrollment_id, arm, shift, research_id.
    no_enrolment = f"0, {null_int}, {null_text}, {null_int}, {null_text}"
    withdrawn_week = d.study_week(d.local_date("e.withdrawn_at", "l.timezone"))
    last_week = f"CASE WHEN e.withdrawn_at IS NULL THEN %(n_weeks)s ELSE {withdrawn_week} END"
    as_of_week = d.study_week(d.local_date("%(as_of)s", "l.timezone"))
    # Table names come from model metadata and numbers from constants, never from input.
    return f"""
WITH RECURSIVE weeks(n) AS (
    SELECT 1 UNION ALL SELECT n + 1 FROM weeks WHERE n < %(n_weeks)s
),
enr AS (
    SELECT e.id AS enrollment_id, e.learner_id, e.arm, e.date_shift_days, {research_id} AS research_id,
           {d.greatest(d.study_week(d.local_date("e.enrolled_at", "l.timezone")), "1")} AS first_week,
           {d.least(last_week, as_of_week)} AS last_week
    FROM {t["enrollment"]} e JOIN {t["learner"]} l ON l.id = e.learner_id
    WHERE e.study_id = %(study_id)s
),
facts AS (
    SELECT p.learner_id, {d.study_week(d.local_date("s.planned_start", "l.timezone"))} AS wk,
           1 AS planned, CASE WHEN s.status = 'completed' THEN 1 ELSE 0 END AS completed,
           s.duration_minutes AS pmin,
           CASE WHEN s.status = 'completed' THEN s.duration_minutes ELSE 0 END AS cmin,
           0 AS checkin, {null_date} AS day, 0 AS grid, {null_int} AS enrollment_id, {null_text} AS arm,
           {null_int} AS shift, {null_text} AS research_id
    FROM {t["session"]} s JOIN {t["plan"]} p ON p.id = s.plan_id JOIN {t["learner"]} l ON l.id = p.learner_id
    WHERE p.learner_id {in_study}
    UNION ALL
    SELECT p.learner_id, {d.study_week(d.local_date("s.completed_at", "l.timezone"))},
           0, 0, 0, 0, 0, {d.local_date("s.completed_at", "l.timezone")}, {no_enrolment}
    FROM {t["session"]} s JOIN {t["plan"]} p ON p.id = s.plan_id JOIN {t["learner"]} l ON l.id = p.learner_id
    WHERE p.learner_id {in_study} AND s.status = 'completed' AND s.completed_at IS NOT NULL
    UNION ALL
    SELECT c.learner_id, {d.study_week(d.local_date("c.created_at", "l.timezone"))},
           0, 0, 0, 0, 1, {null_date}, {no_enrolment}
    FROM {t["checkin"]} c JOIN {t["learner"]} l ON l.id = c.learner_id
    WHERE c.learner_id {in_study}
    UNION ALL
    SELECT cv.learner_id, {d.study_week(d.local_date("m.created_at", "l.timezone"))},
           0, 0, 0, 0, 0, {d.local_date("m.created_at", "l.timezone")}, {no_enrolment}
    FROM {t["message"]} m JOIN {t["conversation"]} cv ON cv.id = m.conversation_id
    JOIN {t["learner"]} l ON l.id = cv.learner_id
    WHERE m.role = 'learner' AND cv.learner_id {in_study}
    UNION ALL
    SELECT enr.learner_id, w.n, 0, 0, 0, 0, 0, {null_date}, 1, enr.enrollment_id, enr.arm, enr.date_shift_days,
           enr.research_id
    FROM enr JOIN weeks w ON w.n BETWEEN enr.first_week AND enr.last_week
),
agg AS (
    SELECT learner_id, wk AS study_week,
           MAX(enrollment_id) AS enrollment_id, MAX(arm) AS arm, MAX(shift) AS date_shift_days,
           MAX(research_id) AS research_id,
           SUM(planned) AS planned_sessions, SUM(completed) AS completed_sessions,
           SUM(pmin) AS planned_minutes, SUM(cmin) AS completed_minutes,
           SUM(checkin) AS checkins, COUNT(DISTINCT day) AS active_days
    FROM facts
    GROUP BY learner_id, wk
    HAVING MAX(grid) = 1
)
SELECT a.learner_id, a.research_id, a.arm, a.study_week, a.date_shift_days,
       a.planned_sessions, a.completed_sessions, a.planned_minutes, a.completed_minutes,
       CASE WHEN a.planned_sessions = 0 THEN NULL
            ELSE a.completed_sessions * 1.0 / a.planned_sessions END AS adherence_ratio,
       CASE WHEN a.planned_sessions = 0 THEN NULL
            WHEN a.completed_sessions * 100 >= a.planned_sessions * {pct} THEN 1 ELSE 0 END AS adherent,
       a.checkins, a.active_days,
       MAX(CASE WHEN a.active_days > 0 THEN a.study_week END)
           OVER (PARTITION BY a.enrollment_id ORDER BY a.study_week
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS last_active_week,
       pr.goal_category, pr.weekly_hours, pr.best_time, pr.confidence
FROM agg a
LEFT JOIN {t["profile"]} pr ON pr.learner_id = a.learner_id
ORDER BY a.enrollment_id, a.study_week
"""  # noqa: S608


def adherence_rows(*, study: Study, as_of: dt.datetime | None = None) -> Iterator[tuple]:
    """Yield one tuple per participant-week (columns: ADHERENCE_COLUMNS), streamed from a
    server-side cursor on PostgreSQL. Weeks run from the participant's enrolment week to the
    earliest of: study end, withdrawal week, the week containing `as_of` (default now)."""
    as_of = as_of or timezone.now()
    postgres = connection.vendor == "postgresql"
    params: dict[str, object] = {
        "study_id": study.pk, "n_weeks": int(study.duration_weeks), "monday": study_monday(study).isoformat(),
    }
    if postgres:
        params["as_of"] = as_of
    else:
        _ensure_sqlite_functions()
        params["as_of"] = as_of.astimezone(dt.UTC).replace(tzinfo=None).isoformat(sep=" ")
    sql = adherence_sql(postgres)
    if postgres:
        # Cast the placeholder so PostgreSQL treats it as a timestamptz, not unknown text.
        sql = sql.replace("((%(as_of)s) AT TIME ZONE", "((%(as_of)s::timestamptz) AT TIME ZONE")
    # chunked_cursor is a named (server-side) cursor on PostgreSQL: memory stays flat at any size.
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while True:
            batch = cursor.fetchmany(FETCH_SIZE)
            if not batch:
                return
            yield from batch


def weekly_adherence_by_arm(*, study: Study, as_of: dt.datetime | None = None) -> list[dict]:
    """Per arm and study week: participant-weeks, mean adherence ratio over weeks with something
    planned, share adherent. One SQL statement wrapping the adherence query."""
    as_of = as_of or timezone.now()
    postgres = connection.vendor == "postgresql"
    inner = adherence_sql(postgres)
    params: dict[str, object] = {
        "study_id": study.pk, "n_weeks": int(study.duration_weeks), "monday": study_monday(study).isoformat(),
    }
    if postgres:
        inner = inner.replace("((%(as_of)s) AT TIME ZONE", "((%(as_of)s::timestamptz) AT TIME ZONE")
        params["as_of"] = as_of
    else:
        _ensure_sqlite_functions()
        params["as_of"] = as_of.astimezone(dt.UTC).replace(tzinfo=None).isoformat(sep=" ")
    # PostgreSQL and SQLite both accept a WITH query as a subquery.
    sql = (
        "SELECT arm, study_week, COUNT(*) AS rows, AVG(adherence_ratio) AS mean_ratio, "  # noqa: S608
        "AVG(CASE WHEN adherent IS NULL THEN NULL ELSE adherent * 1.0 END) AS share_adherent "
        f"FROM ({inner}) a GROUP BY arm, study_week ORDER BY arm, study_week"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [
            {"arm": arm, "study_week": int(week), "rows": int(rows),
             "mean_ratio": None if mean is None else float(mean),
             "share_adherent": None if share is None else float(share)}
            for arm, week, rows, mean, share in cursor.fetchall()
        ]
