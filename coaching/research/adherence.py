"""The adherence query: one SQL statement over the whole study (no per-learner loop), streamed
as participant-week rows, and its per-arm summary.

Weeks. A session belongs to the ISO week (Monday start) of its LOCAL start time in the time zone
the participant had at enrolment (`Enrollment.timezone`); study week 1 is the ISO week containing
`Study.start_date`. Local dates are computed in SQL on both PostgreSQL and SQLite
(`coaching.research.sql_dialect`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import connection
from django.utils import timezone

from coaching.models import CheckIn, Conversation, Learner, Message, Plan, PlannedSession
from coaching.research.conf import ADHERENT_THRESHOLD, missed_grace_minutes
from coaching.research.models import Enrollment, Study
from coaching.research.selectors import study_monday
from coaching.research.sql_dialect import Dialect, ensure_sqlite_functions

FETCH_SIZE = 2000


ADHERENCE_COLUMNS = [
    "learner_id", "research_id", "arm", "stratum", "timezone", "enrolled_week", "withdrawn_week",
    "study_week", "week_complete",
    "planned_sessions", "completed_sessions", "skipped_sessions", "missed_sessions", "pending_sessions",
    "planned_minutes", "completed_minutes", "adherence_ratio", "adherent",
    "checkins", "active_days", "last_active_week",
    "goal_category", "weekly_hours", "best_time", "confidence",
]

# Participant attributes carried on the grid rows only (name, type of the typed NULL elsewhere).
_GRID_ATTRIBUTES = [
    ("enrollment_id", "BIGINT"), ("arm", "TEXT"), ("stratum", "TEXT"), ("tz", "TEXT"), ("research_id", "TEXT"),
    ("enrolled_week", "BIGINT"), ("withdrawn_week", "BIGINT"), ("as_of_week", "BIGINT"),
    ("b_goal", "TEXT"), ("b_hours", "NUMERIC"), ("b_best", "TEXT"), ("b_conf", "BIGINT"),
]


def adherence_sql(postgres: bool) -> str:
    """One statement, shaped so no plan can degrade into a nested loop over two large inputs:
    every fact (session, check-in, learner message, and one "grid" row per participant-week that
    must appear) becomes a row of one UNION ALL keyed by (learner, study week), aggregated once.
    Fact branches join base tables by primary key or indexed foreign key only (the enrolment by
    its unique (study, learner) key), and participant attributes ride on the grid rows, so fresh
    data without planner statistics (a bulk import exported right away) cannot produce a
    quadratic plan.

    Definitions (docs/research-export.md):
    - weeks are counted in the time zone the participant had at enrolment;
    - only what happened while enrolled counts: sessions planned, check-ins and messages made in
      [enrolled_at, withdrawn_at);
    - a session counts once it is due (planned start + duration + grace <= as_of); until then it
      is `pending` and counts nowhere else;
    - a session's activity (its active day, its check-ins) belongs to the session's own local
      date, not to the time it was reported;
    - baseline covariates and the stratum are the copies stored with the enrolment."""
    d = Dialect(postgres)
    t = {
        "enrollment": Enrollment._meta.db_table, "learner": Learner._meta.db_table,
        "plan": Plan._meta.db_table, "session": PlannedSession._meta.db_table, "checkin": CheckIn._meta.db_table,
        "message": Message._meta.db_table, "conversation": Conversation._meta.db_table,
    }
    pct = round(ADHERENT_THRESHOLD * 100)
    research_id = "l.research_id::text" if postgres else "l.research_id"
    no_attrs = ", ".join(f"{d.null(kind)} AS {name}" for name, kind in _GRID_ATTRIBUTES)
    # The enrolment of this study for the fact's learner, and the window it covers.
    enrolled = f"JOIN {t['enrollment']} e ON e.learner_id = {{who}} AND e.study_id = %(study_id)s"
    in_window = (f"{d.before('e.enrolled_at', '{when}', or_equal=True)} "
                 f"AND (e.withdrawn_at IS NULL OR {d.before('{when}', 'e.withdrawn_at')})")
    withdrawn_week = d.study_week(d.local_date("e.withdrawn_at", "e.timezone"))
    withdrawn_known = f"e.withdrawn_at IS NOT NULL AND {d.before('e.withdrawn_at', d.as_of, or_equal=True)}"
    session_due = d.due("s.planned_start", "s.duration_minutes")
    # Table names come from model metadata and numbers from constants, never from input.
    return f"""
WITH RECURSIVE weeks(n) AS (
    SELECT 1 UNION ALL SELECT n + 1 FROM weeks WHERE n < %(n_weeks)s
),
enr AS (
    SELECT e.id AS enrollment_id, e.learner_id, e.arm, e.stratum, e.timezone AS tz, {research_id} AS research_id,
           {d.greatest(d.study_week(d.local_date("e.enrolled_at", "e.timezone")), "1")} AS enrolled_week,
           CASE WHEN {withdrawn_known} AND {withdrawn_week} <= %(n_weeks)s THEN {withdrawn_week} END
               AS withdrawn_week,
           {d.study_week(d.local_date(d.as_of, "e.timezone"))} AS as_of_week,
           e.baseline_goal_category AS b_goal, e.baseline_weekly_hours AS b_hours,
           e.baseline_best_time AS b_best, e.baseline_confidence AS b_conf
    FROM {t["enrollment"]} e JOIN {t["learner"]} l ON l.id = e.learner_id
    WHERE e.study_id = %(study_id)s
),
facts AS (
    SELECT x.learner_id, {d.study_week("x.day")} AS wk,
           x.due AS planned, x.due * x.done AS completed, x.due * x.skip AS skipped,
           x.due * (1 - x.done - x.skip) AS missed, 1 - x.due AS pending,
           x.due * x.minutes AS pmin, x.due * x.done * x.minutes AS cmin, 0 AS checkin,
           CASE WHEN x.due = 1 AND x.done = 1 THEN x.day END AS day, 0 AS grid, {no_attrs}
    FROM (
        SELECT p.learner_id, {d.local_date("s.planned_start", "e.timezone")} AS day, s.duration_minutes AS minutes,
               CASE WHEN s.status = 'completed' THEN 1 ELSE 0 END AS done,
               CASE WHEN s.status = 'skipped' THEN 1 ELSE 0 END AS skip,
               CASE WHEN {session_due} THEN 1 ELSE 0 END AS due
        FROM {t["session"]} s JOIN {t["plan"]} p ON p.id = s.plan_id {enrolled.format(who="p.learner_id")}
        WHERE {in_window.format(when="s.planned_start")}
    ) x
    UNION ALL
    SELECT y.learner_id, {d.study_week("y.day")}, 0, 0, 0, 0, 0, 0, 0, 1, {d.null("DATE")}, 0, {no_attrs}
    FROM (
        SELECT c.learner_id,
               CASE WHEN s.id IS NULL THEN {d.local_date("c.created_at", "e.timezone")}
                    ELSE {d.local_date("s.planned_start", "e.timezone")} END AS day
        FROM {t["checkin"]} c {enrolled.format(who="c.learner_id")}
        LEFT JOIN {t["session"]} s ON s.id = c.session_id
        WHERE {d.before("c.created_at", d.as_of, or_equal=True)}
          AND ((s.id IS NULL AND {in_window.format(when="c.created_at")})
               OR (s.id IS NOT NULL AND {in_window.format(when="s.planned_start")} AND {session_due}))
    ) y
    UNION ALL
    SELECT cv.learner_id, {d.study_week(d.local_date("m.created_at", "e.timezone"))},
           0, 0, 0, 0, 0, 0, 0, 0, {d.local_date("m.created_at", "e.timezone")}, 0, {no_attrs}
    FROM {t["message"]} m JOIN {t["conversation"]} cv ON cv.id = m.conversation_id
    {enrolled.format(who="cv.learner_id")}
    WHERE m.role = 'learner' AND {in_window.format(when="m.created_at")}
      AND {d.before("m.created_at", d.as_of, or_equal=True)}
    UNION ALL
    SELECT enr.learner_id, w.n, 0, 0, 0, 0, 0, 0, 0, 0, {d.null("DATE")}, 1,
           {", ".join(f"enr.{name}" for name, _ in _GRID_ATTRIBUTES)}
    FROM enr JOIN weeks w ON w.n BETWEEN enr.enrolled_week
        AND {d.least(d.least("COALESCE(enr.withdrawn_week, %(n_weeks)s)", "enr.as_of_week"), "%(n_weeks)s")}
),
agg AS (
    SELECT learner_id, wk AS study_week,
           {", ".join(f"MAX({name}) AS {name}" for name, _ in _GRID_ATTRIBUTES)},
           SUM(planned) AS planned_sessions, SUM(completed) AS completed_sessions,
           SUM(skipped) AS skipped_sessions, SUM(missed) AS missed_sessions, SUM(pending) AS pending_sessions,
           SUM(pmin) AS planned_minutes, SUM(cmin) AS completed_minutes,
           SUM(checkin) AS checkins, COUNT(DISTINCT day) AS active_days
    FROM facts
    GROUP BY learner_id, wk
    HAVING MAX(grid) = 1
)
SELECT a.learner_id, a.research_id, a.arm, a.stratum, a.tz, a.enrolled_week, a.withdrawn_week, a.study_week,
       CASE WHEN a.study_week < a.as_of_week AND a.pending_sessions = 0 THEN 1 ELSE 0 END AS week_complete,
       a.planned_sessions, a.completed_sessions, a.skipped_sessions, a.missed_sessions, a.pending_sessions,
       a.planned_minutes, a.completed_minutes,
       CASE WHEN a.planned_sessions = 0 THEN NULL
            ELSE a.completed_sessions * 1.0 / a.planned_sessions END AS adherence_ratio,
       CASE WHEN a.planned_sessions = 0 THEN NULL
            WHEN a.completed_sessions * 100 >= a.planned_sessions * {pct} THEN 1 ELSE 0 END AS adherent,
       a.checkins, a.active_days,
       MAX(CASE WHEN a.active_days > 0 THEN a.study_week END)
           OVER (PARTITION BY a.enrollment_id ORDER BY a.study_week
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS last_active_week,
       a.b_goal AS goal_category, a.b_hours AS weekly_hours, a.b_best AS best_time, a.b_conf AS confidence
FROM agg a
ORDER BY a.enrollment_id, a.study_week
"""  # noqa: S608


def _adherence_query(study: Study, as_of: dt.datetime | None) -> tuple[str, dict[str, object]]:
    as_of = as_of or timezone.now()
    postgres = connection.vendor == "postgresql"
    params: dict[str, object] = {
        "study_id": study.pk, "n_weeks": int(study.duration_weeks), "monday": study_monday(study).isoformat(),
        "grace": int(missed_grace_minutes()),
    }
    if postgres:
        params["as_of"] = as_of
    else:
        ensure_sqlite_functions()
        params["as_of"] = as_of.astimezone(dt.UTC).replace(tzinfo=None).isoformat(sep=" ")
    return adherence_sql(postgres), params


def adherence_rows(*, study: Study, as_of: dt.datetime | None = None) -> Iterator[tuple]:
    """Yield one tuple per participant-week (columns: ADHERENCE_COLUMNS), streamed from a
    server-side cursor on PostgreSQL. Weeks run from the participant's enrolment week to the
    earliest of: study end, withdrawal week, the week containing `as_of` (default now)."""
    sql, params = _adherence_query(study, as_of)
    # chunked_cursor is a named (server-side) cursor on PostgreSQL: memory stays flat at any size.
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while True:
            batch = cursor.fetchmany(FETCH_SIZE)
            if not batch:
                return
            yield from batch


@dataclass
class ArmStats:
    """Adherence of one arm (over all weeks, or one study week). Two summaries that differ when
    participants plan different numbers of sessions: `mean_ratio` is the mean of the per
    participant-week ratios (each week with something planned weighs the same), `pooled_ratio`
    is all completed over all planned sessions (each session weighs the same)."""

    arm: str
    study_week: int | None
    participant_weeks: int = 0
    weeks_with_plan: int = 0
    planned_sessions: int = 0
    completed_sessions: int = 0
    skipped_sessions: int = 0
    missed_sessions: int = 0
    sum_ratio: float = 0.0
    adherent_weeks: int = 0

    @property
    def mean_ratio(self) -> float | None:
        return self.sum_ratio / self.weeks_with_plan if self.weeks_with_plan else None

    @property
    def pooled_ratio(self) -> float | None:
        return self.completed_sessions / self.planned_sessions if self.planned_sessions else None

    @property
    def share_adherent(self) -> float | None:
        return self.adherent_weeks / self.weeks_with_plan if self.weeks_with_plan else None

    def add(self, other: ArmStats) -> None:
        for name in ("participant_weeks", "weeks_with_plan", "planned_sessions", "completed_sessions",
                     "skipped_sessions", "missed_sessions", "sum_ratio", "adherent_weeks"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def adherence_by_arm(*, study: Study, as_of: dt.datetime | None = None,
                     complete_weeks_only: bool = False) -> tuple[list[ArmStats], list[ArmStats]]:
    """(per arm and study week, per arm over all weeks). One SQL statement wrapping the adherence
    query; the all-weeks figures are sums of the weekly ones, so both always agree."""
    inner, params = _adherence_query(study, as_of)
    where = "WHERE week_complete = 1" if complete_weeks_only else ""
    # PostgreSQL and SQLite both accept a WITH query as a subquery.
    sql = (
        "SELECT arm, study_week, COUNT(*), COUNT(adherence_ratio), SUM(planned_sessions), "  # noqa: S608
        "SUM(completed_sessions), SUM(skipped_sessions), SUM(missed_sessions), "
        "COALESCE(SUM(adherence_ratio), 0), COALESCE(SUM(adherent), 0) "
        f"FROM ({inner}) a {where} GROUP BY arm, study_week ORDER BY arm, study_week"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        weekly = [
            ArmStats(arm=arm, study_week=int(week), participant_weeks=int(n), weeks_with_plan=int(n_plan),
                     planned_sessions=int(planned), completed_sessions=int(completed), skipped_sessions=int(skipped),
                     missed_sessions=int(missed), sum_ratio=float(sum_ratio), adherent_weeks=int(n_adherent))
            for arm, week, n, n_plan, planned, completed, skipped, missed, sum_ratio, n_adherent in cursor.fetchall()
        ]
    totals: dict[str, ArmStats] = {arm: ArmStats(arm=arm, study_week=None) for arm in study.arms}
    for row in weekly:
        totals.setdefault(row.arm, ArmStats(arm=row.arm, study_week=None)).add(row)
    return weekly, list(totals.values())
