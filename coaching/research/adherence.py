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

from coaching.models import CheckIn, Conversation, Learner, Message, Plan, PlannedSession, SessionStatusChange
from coaching.research.conf import ADHERENT_THRESHOLD, WEEK_CLOSE_HOURS, missed_grace_minutes
from coaching.research.models import Enrollment, Study
from coaching.research.selectors import study_monday
from coaching.research.sql_dialect import Dialect, ensure_sqlite_functions

FETCH_SIZE = 2000


ADHERENCE_COLUMNS = [
    "enrollment_id", "learner_id", "research_id", "arm", "stratum", "timezone", "timezone_at_export", "enrolled_week",
    "withdrawn_week", "study_week", "week_complete", "week_closed",
    "protocol_adherence", "protocol_adherent",
    "planned_sessions", "completed_sessions", "completed_by_checkin", "completed_by_calendar", "completed_by_staff",
    "skipped_sessions", "missed_sessions", "pending_sessions", "cancelled_sessions", "replaced_sessions",
    "planned_minutes", "completed_minutes", "adherence_ratio", "adherent",
    "late_corrections", "sessions_other_plan_week",
    "checkins", "active_days", "last_active_week",
    "goal_category", "weekly_hours", "best_time", "confidence",
]

# Participant attributes carried on the grid rows only (name, type of the typed NULL elsewhere).
_GRID_ATTRIBUTES = [
    ("learner_id", "BIGINT"), ("arm", "TEXT"), ("stratum", "TEXT"), ("tz", "TEXT"), ("tz_now", "TEXT"),
    ("research_id", "TEXT"),
    ("enrolled_week", "BIGINT"), ("withdrawn_week", "BIGINT"), ("as_of_week", "BIGINT"),
    ("b_goal", "TEXT"), ("b_hours", "NUMERIC"), ("b_best", "TEXT"), ("b_conf", "BIGINT"),
]
# The counts a fact row contributes (summed per participant-week), in this order.
_FACT_COUNTS = ["planned", "completed", "by_checkin", "by_calendar", "by_staff", "skipped", "missed", "pending",
                "cancelled", "replaced", "pmin", "cmin", "late", "other_plan", "checkin"]


def adherence_sql(postgres: bool) -> str:
    """One statement, shaped so no plan can degrade into a nested loop over two large inputs:
    every fact (session, check-in, learner message, and one "grid" row per participant-week that
    must appear) becomes a row of one UNION ALL keyed by (enrolment, study week), aggregated once.
    Fact branches join base tables by primary key or indexed foreign key only (the enrolment by
    its unique (study, learner) key; a session's audit rows by their session), and participant
    attributes ride on the grid rows, so fresh data without planner statistics (a bulk import
    exported right away) cannot produce a quadratic plan.

    Definitions (docs/research-export.md):
    - weeks are counted in the time zone the participant had at enrolment;
    - only what happened while enrolled counts: sessions planned, check-ins and messages made in
      [enrolled_at, withdrawn_at);
    - a week closes WEEK_CLOSE_HOURS after it ends; a session is read as its audit trail says it
      was at min(its week's close, as_of): a status changed after the close is a late correction
      (counted in `late_corrections`), never a change of the closed week;
    - a session counts once it is due (planned start + duration + grace <= as_of); until then it
      is `pending` and counts nowhere else; cancelled and replaced sessions count only as such;
    - a completion counts only with its evidence (check-in, calendar import of the session's own
      UID, staff), split by source;
    - a session's activity (its active day, its check-ins, once per session) belongs to the
      session's own local date, not to the time it was reported;
    - the primary outcome is completed sessions against the study's intended sessions per week,
      for every participant-week (0 when nothing was done);
    - baseline covariates and the stratum are the copies stored with the enrolment."""
    d = Dialect(postgres)
    t = {
        "enrollment": Enrollment._meta.db_table, "learner": Learner._meta.db_table,
        "plan": Plan._meta.db_table, "session": PlannedSession._meta.db_table, "checkin": CheckIn._meta.db_table,
        "message": Message._meta.db_table, "conversation": Conversation._meta.db_table,
        "change": SessionStatusChange._meta.db_table,
    }
    pct = round(ADHERENT_THRESHOLD * 100)
    research_id = "e.research_id::text" if postgres else "e.research_id"
    no_attrs = ", ".join(f"{d.null(kind)} AS {name}" for name, kind in _GRID_ATTRIBUTES)
    zeros = dict.fromkeys(_FACT_COUNTS, "0")

    def counts(*, named: bool = False, **values: str) -> str:
        # The first branch of the UNION names the columns.
        return ", ".join({**zeros, **values}[name] + (f" AS {name}" if named else "") for name in _FACT_COUNTS)

    # The enrolment of this study for the fact's learner, and the window it covers.
    enrolled = f"JOIN {t['enrollment']} e ON e.learner_id = {{who}} AND e.study_id = %(study_id)s"
    in_window = (f"{d.before('e.enrolled_at', '{when}', or_equal=True)} "
                 f"AND (e.withdrawn_at IS NULL OR {d.before('{when}', 'e.withdrawn_at')})")
    withdrawn_week = d.greatest(d.study_week(d.local_date("e.withdrawn_at", "e.timezone")), "1")
    withdrawn_known = f"e.withdrawn_at IS NOT NULL AND {d.before('e.withdrawn_at', d.as_of, or_equal=True)}"
    session_due = d.due("s.planned_start", "s.duration_minutes")
    session_day = d.local_date("s.planned_start", "e.timezone")
    # A session's state at `x.read_at`: the first audit row after that moment says what it was
    # then (its from_status); none means it is unchanged since.
    # (Table names come from model metadata, never from input: hence the S608 waivers.)
    status_then = (f"COALESCE((SELECT ch.from_status FROM {t['change']} ch "  # noqa: S608
                   f"WHERE ch.session_id = x.sid AND {d.before('x.read_at', 'ch.changed_at')} "
                   "ORDER BY ch.changed_at, ch.id LIMIT 1), x.status)")
    # Its evidence then: the completion source of the last change into `completed` by that moment.
    evidence_then = (f"COALESCE((SELECT NULLIF(ch.completion_source, '') FROM {t['change']} ch "  # noqa: S608
                     f"WHERE ch.session_id = x.sid AND ch.to_status = 'completed' "
                     f"AND {d.before('ch.changed_at', 'x.read_at', or_equal=True)} "
                     f"ORDER BY ch.changed_at DESC, ch.id DESC LIMIT 1), x.completion_source)")
    late = (f"CASE WHEN x.closed = 1 THEN (SELECT COUNT(*) FROM {t['change']} ch "  # noqa: S608
            f"WHERE ch.session_id = x.sid AND {d.before('x.close_at', 'ch.changed_at')} "
            f"AND {d.before('ch.changed_at', d.as_of, or_equal=True)}) ELSE 0 END")
    counted = "CASE WHEN y.st IN ('planned', 'completed', 'skipped', 'missed') THEN 1 ELSE 0 END"
    done = "CASE WHEN y.st = 'completed' AND y.src IN ('self_report', 'calendar', 'staff') THEN 1 ELSE 0 END"
    # Table names come from model metadata and numbers from constants, never from input.
    return f"""
WITH RECURSIVE weeks(n) AS (
    SELECT 1 UNION ALL SELECT n + 1 FROM weeks WHERE n < %(n_weeks)s
),
enr AS (
    SELECT e.id AS eid, e.learner_id, e.arm, e.stratum, e.timezone AS tz, l.timezone AS tz_now,
           {research_id} AS research_id,
           {d.greatest(d.study_week(d.local_date("e.enrolled_at", "e.timezone")), "1")} AS enrolled_week,
           CASE WHEN {withdrawn_known} AND {withdrawn_week} <= %(n_weeks)s
                THEN {d.greatest(withdrawn_week, d.study_week(d.local_date("e.enrolled_at", "e.timezone")))} END
               AS withdrawn_week,
           {d.study_week(d.local_date(d.as_of, "e.timezone"))} AS as_of_week,
           e.baseline_goal_category AS b_goal, e.baseline_weekly_hours AS b_hours,
           e.baseline_best_time AS b_best, e.baseline_confidence AS b_conf
    FROM {t["enrollment"]} e LEFT JOIN {t["learner"]} l ON l.id = e.learner_id
    WHERE e.study_id = %(study_id)s
),
ses AS (
    SELECT w.*, CASE WHEN {d.before("w.close_at", d.as_of, or_equal=True)} THEN 1 ELSE 0 END AS closed,
           CASE WHEN {d.before("w.close_at", d.as_of, or_equal=True)} THEN w.close_at ELSE {d.as_of} END AS read_at
    FROM (
        SELECT e.id AS eid, s.id AS sid, s.status, s.completion_source, s.duration_minutes AS minutes,
               {session_day} AS day, p.week_start AS plan_week_start,
               CASE WHEN {session_due} THEN 1 ELSE 0 END AS due,
               {d.week_close(d.next_monday(session_day), "e.timezone")} AS close_at
        FROM {t["session"]} s JOIN {t["plan"]} p ON p.id = s.plan_id {enrolled.format(who="p.learner_id")}
        WHERE {in_window.format(when="s.planned_start")}
    ) w
),
ses_then AS (
    SELECT x.eid, x.sid, x.day, x.minutes, x.due, x.plan_week_start, x.read_at,
           {status_then} AS st, {evidence_then} AS src, {late} AS late
    FROM ses x
),
facts AS (
    SELECT z.eid, {d.study_week("z.day")} AS wk,
           {counts(named=True, planned="z.counted * z.due", completed="z.counted * z.due * z.done",
                    by_checkin="z.counted * z.due * z.done * CASE WHEN z.src = 'self_report' THEN 1 ELSE 0 END",
                    by_calendar="z.counted * z.due * z.done * CASE WHEN z.src = 'calendar' THEN 1 ELSE 0 END",
                    by_staff="z.counted * z.due * z.done * CASE WHEN z.src = 'staff' THEN 1 ELSE 0 END",
                    skipped="z.counted * z.due * z.skip", missed="z.counted * z.due * (1 - z.done - z.skip)",
                    pending="z.counted * (1 - z.due)",
                    cancelled="CASE WHEN z.st = 'cancelled' THEN 1 ELSE 0 END",
                    replaced="CASE WHEN z.st = 'replaced' THEN 1 ELSE 0 END",
                    pmin="z.counted * z.due * z.minutes", cmin="z.counted * z.due * z.done * z.minutes",
                    late="z.late",
                    other_plan=f"z.counted * CASE WHEN {d.study_week('z.plan_week_start')} <> "
                               f"{d.study_week('z.day')} THEN 1 ELSE 0 END")},
           CASE WHEN z.counted = 1 AND z.due = 1 AND z.done = 1 THEN z.day END AS day, 0 AS grid, {no_attrs}
    FROM (
        SELECT y.*, {counted} AS counted, {done} AS done,
               CASE WHEN y.st = 'skipped' THEN 1 ELSE 0 END AS skip
        FROM ses_then y
    ) z
    UNION ALL
    SELECT k.eid, {d.study_week("k.day")}, {counts(checkin="1")}, {d.null("DATE")}, 0, {no_attrs}
    FROM (
        SELECT DISTINCT y.eid, y.sid AS key, y.day
        FROM ses_then y JOIN {t["checkin"]} c ON c.session_id = y.sid
        WHERE y.due = 1 AND y.st IN ('planned', 'completed', 'skipped', 'missed')
          AND {d.before("c.created_at", "y.read_at", or_equal=True)}
        UNION ALL
        SELECT e.id, -c.id, {d.local_date("c.created_at", "e.timezone")}
        FROM {t["checkin"]} c {enrolled.format(who="c.learner_id")}
        WHERE c.session_id IS NULL AND {d.before("c.created_at", d.as_of, or_equal=True)}
          AND {in_window.format(when="c.created_at")}
    ) k
    UNION ALL
    SELECT e.id, {d.study_week(d.local_date("m.created_at", "e.timezone"))},
           {counts()}, {d.local_date("m.created_at", "e.timezone")}, 0, {no_attrs}
    FROM {t["message"]} m JOIN {t["conversation"]} cv ON cv.id = m.conversation_id
    {enrolled.format(who="cv.learner_id")}
    WHERE m.role = 'learner' AND {in_window.format(when="m.created_at")}
      AND {d.before("m.created_at", d.as_of, or_equal=True)}
    UNION ALL
    SELECT enr.eid, w.n, {counts()}, {d.null("DATE")}, 1,
           {", ".join(f"enr.{name}" for name, _ in _GRID_ATTRIBUTES)}
    FROM enr JOIN weeks w ON w.n BETWEEN enr.enrolled_week
        AND {d.least(d.least("COALESCE(enr.withdrawn_week, %(n_weeks)s)", "enr.as_of_week"), "%(n_weeks)s")}
),
agg AS (
    SELECT eid, wk AS study_week,
           {", ".join(f"MAX({name}) AS {name}" for name, _ in _GRID_ATTRIBUTES)},
           {", ".join(f"SUM({name}) AS {name}" for name in _FACT_COUNTS)},
           COUNT(DISTINCT day) AS active_days
    FROM facts
    GROUP BY eid, wk
    HAVING MAX(grid) = 1
)
SELECT a.eid AS enrollment_id, a.learner_id, a.research_id, a.arm, a.stratum, a.tz AS timezone,
       a.tz_now AS timezone_at_export,
       a.enrolled_week, a.withdrawn_week, a.study_week,
       CASE WHEN a.study_week < a.as_of_week AND a.pending = 0 THEN 1 ELSE 0 END AS week_complete,
       CASE WHEN {d.before(d.week_close(d.week_number_end("a.study_week"), "a.tz"), d.as_of, or_equal=True)}
            THEN 1 ELSE 0 END AS week_closed,
       {d.least("a.completed", "%(intended)s")} * 1.0 / %(intended)s AS protocol_adherence,
       CASE WHEN a.completed >= %(intended)s THEN 1 ELSE 0 END AS protocol_adherent,
       a.planned AS planned_sessions, a.completed AS completed_sessions, a.by_checkin AS completed_by_checkin,
       a.by_calendar AS completed_by_calendar, a.by_staff AS completed_by_staff, a.skipped AS skipped_sessions,
       a.missed AS missed_sessions, a.pending AS pending_sessions, a.cancelled AS cancelled_sessions,
       a.replaced AS replaced_sessions, a.pmin AS planned_minutes, a.cmin AS completed_minutes,
       CASE WHEN a.planned = 0 THEN NULL ELSE a.completed * 1.0 / a.planned END AS adherence_ratio,
       CASE WHEN a.planned = 0 THEN NULL
            WHEN a.completed * 100 >= a.planned * {pct} THEN 1 ELSE 0 END AS adherent,
       a.late AS late_corrections, a.other_plan AS sessions_other_plan_week, a.checkin AS checkins, a.active_days,
       MAX(CASE WHEN a.active_days > 0 THEN a.study_week END)
           OVER (PARTITION BY a.eid ORDER BY a.study_week
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS last_active_week,
       a.b_goal AS goal_category, a.b_hours AS weekly_hours, a.b_best AS best_time, a.b_conf AS confidence
FROM agg a
ORDER BY a.eid, a.study_week
"""  # noqa: S608


def _adherence_query(study: Study, as_of: dt.datetime | None) -> tuple[str, dict[str, object]]:
    as_of = as_of or timezone.now()
    postgres = connection.vendor == "postgresql"
    params: dict[str, object] = {
        "study_id": study.pk, "n_weeks": int(study.duration_weeks), "monday": study_monday(study).isoformat(),
        "grace": int(missed_grace_minutes()), "intended": int(study.intended_sessions_per_week),
        "close_hours": int(WEEK_CLOSE_HOURS),
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
    """Adherence of one arm (over all weeks, or one study week). The primary outcome first:
    `mean_protocol_adherence` is the mean of protocol_adherence over ALL participant-weeks (a week
    with nothing done is a 0, never left out), `share_protocol_adherent` the share of those weeks
    meeting the intended use. Secondary, plan-based: `mean_ratio` is the mean of the per
    participant-week ratios (each week with something planned weighs the same), `pooled_ratio`
    all completed over all planned sessions (each session weighs the same); they leave out weeks
    with nothing planned, so a participant who plans less can move them."""

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
    sum_protocol: float = 0.0
    protocol_adherent_weeks: int = 0

    @property
    def mean_protocol_adherence(self) -> float | None:
        return self.sum_protocol / self.participant_weeks if self.participant_weeks else None

    @property
    def share_protocol_adherent(self) -> float | None:
        return self.protocol_adherent_weeks / self.participant_weeks if self.participant_weeks else None

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
                     "skipped_sessions", "missed_sessions", "sum_ratio", "adherent_weeks", "sum_protocol",
                     "protocol_adherent_weeks"):
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
        "COALESCE(SUM(adherence_ratio), 0), COALESCE(SUM(adherent), 0), "
        "SUM(protocol_adherence), SUM(protocol_adherent) "
        f"FROM ({inner}) a {where} GROUP BY arm, study_week ORDER BY arm, study_week"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        weekly = [
            ArmStats(arm=arm, study_week=int(week), participant_weeks=int(n), weeks_with_plan=int(n_plan),
                     planned_sessions=int(planned), completed_sessions=int(completed), skipped_sessions=int(skipped),
                     missed_sessions=int(missed), sum_ratio=float(sum_ratio), adherent_weeks=int(n_adherent),
                     sum_protocol=float(sum_protocol), protocol_adherent_weeks=int(n_protocol))
            for (arm, week, n, n_plan, planned, completed, skipped, missed, sum_ratio, n_adherent, sum_protocol,
                 n_protocol) in cursor.fetchall()
        ]
    totals: dict[str, ArmStats] = {arm: ArmStats(arm=arm, study_week=None) for arm in study.arms}
    for row in weekly:
        totals.setdefault(row.arm, ArmStats(arm=row.arm, study_week=None)).add(row)
    return weekly, list(totals.values())
