"""The adherence export's codebook: every column with its type and meaning, how each type is
written and read (CSV, Arrow/Parquet, pandas), and the codebook as Markdown, CSV and an Arrow
schema. The writers (`coaching.research.export`) and the validator are built from it."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from coaching.research.conf import EXPORT_SCHEMA_VERSION, PSEUDONYM_HEX_CHARS, PSEUDONYM_PREFIX, WEEK_CLOSE_HOURS
from coaching.research.models import Study


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # string | integer | float | boolean | date | datetime
    description: str
    nullable: bool = False


# How each codebook type is written and read. One place, used by the writers, the validator,
# the codebook's reading instructions and the tests.
TYPES: dict[str, dict[str, str]] = {
    "string": {"csv": "text", "arrow": "string", "pandas": "string"},
    "integer": {"csv": "digits, e.g. 3", "arrow": "int64", "pandas": "Int64"},
    "float": {"csv": "decimal with a point, e.g. 0.75", "arrow": "double", "pandas": "Float64"},
    "boolean": {"csv": "true / false", "arrow": "bool", "pandas": "boolean"},
    "date": {"csv": "YYYY-MM-DD", "arrow": "date32[day]", "pandas": "datetime64 (parse_dates)"},
    # Parquet has no second unit: milliseconds is what a reader gets back from the file.
    "datetime": {"csv": "YYYY-MM-DDTHH:MM:SSZ (UTC)", "arrow": "timestamp[ms, tz=UTC]",
                 "pandas": "datetime64[UTC] (parse_dates)"},
}

COLUMNS: list[Column] = [
    Column("participant_id", "string",
           f"Pseudonymous participant id: '{PSEUDONYM_PREFIX}' + the first {PSEUDONYM_HEX_CHARS} hex characters of "
           "HMAC-SHA256 under the study secret of the study's own id and the learner's internal research id. Stable "
           "across exports of the same study; two studies never share an id, even when given the same secret."),
    Column("arm", "string",
           "Randomised study arm (coach = multi-agent coach, tracker = plain calendar tracker). It is also the "
           "treatment delivered: while enrolled, a learner's treatment follows this enrolment, and a learner cannot "
           "be enrolled in two studies whose enrolments overlap in time."),
    Column("stratum", "string",
           "Randomisation stratum stored at enrolment: the goal category at enrolment, or 'unknown' when there was "
           "none. Never changes."),
    Column("cohort", "string", "Study cohort label; missing when the study has none.", nullable=True),
    Column("timezone", "string",
           "IANA time zone the participant had at enrolment (e.g. Europe/Berlin). Study weeks, local dates and "
           "active days are counted in it, also after the participant changes time zone."),
    Column("timezone_at_export", "string",
           "IANA time zone the participant had when the file was made; differs from timezone after a move. The "
           "coaching plans (and the sessions' weekdays the participant sees) follow the current zone, the study "
           "weeks here the enrolment zone: see sessions_other_plan_week. Missing when the learner was erased.",
           nullable=True),
    Column("enrolled_week", "integer",
           "Study week of enrolment (1 also for participants enrolled before the study started); the "
           "participant's first row."),
    Column("withdrawn", "boolean",
           "true when the participant withdrew before the export; the same on all of their rows."),
    Column("withdrawn_week", "integer",
           "Study week of the withdrawal (their last row, which may be a partial week; 1 for a participant "
           "withdrawn before the study started, who still has that one row: every randomised participant is in "
           "the file); missing when not withdrawn. An erased learner is withdrawn at the erasure and kept as a "
           "pseudonymous stub.", nullable=True),
    Column("study_week", "integer",
           "Week number from the study start: 1 = the ISO week (Monday start) containing the study start date. "
           "Rows run from enrolled_week to the earliest of the study's last week, withdrawn_week and the week of "
           "the export."),
    Column("week_start", "date",
           "Monday of the study week. Real calendar date when dates_shifted is false; otherwise moved by the "
           "study's secret offset (see the codebook's header)."),
    Column("week_complete", "boolean",
           "true when the week has ended (in the participant's time zone) and no session of it is pending; false "
           "for the current week and for a past week with a session still inside its grace window."),
    Column("week_closed", "boolean",
           "true when the week closed before the export: WEEK_CLOSE_HOURS (72) hours after the week ended, in "
           "the enrolment time zone. A closed week's counts are read as the sessions' audit trail says they were "
           "at the close and never change in a later export; what changed afterwards is counted in "
           "late_corrections."),
    Column("intended_sessions", "integer",
           "The study's pre-registered intended use: sessions per week the protocol asks of every participant "
           "(the same on every row; the codebook's header states it in words)."),
    Column("protocol_adherence", "float",
           "PRIMARY OUTCOME. min(completed_sessions, intended_sessions) / intended_sessions, rounded to 4 "
           "decimals; defined for EVERY participant-week from enrolment to the study's end or the withdrawal, "
           "including weeks with nothing planned or done (0.0). Completions need evidence (see "
           "completed_sessions); sessions beyond the intended number add nothing, so more planning cannot raise "
           "it and less cannot hide."),
    Column("protocol_adherent", "boolean",
           "completed_sessions >= intended_sessions: the participant met the intended use that week."),
    Column("planned_sessions", "integer",
           "SECONDARY (plan-based) denominator. Sessions planned this week (local time) while enrolled that are "
           "due: planned start + duration + the grace window have passed at the export, not cancelled or "
           "replaced. = completed + skipped + missed; both skipped and missed sessions are in this denominator. "
           "The treatment can change it (the coach arm plans), which is why it is not the primary outcome."),
    Column("completed_sessions", "integer",
           "Of planned_sessions, those completed WITH evidence = completed_by_checkin + completed_by_calendar + "
           "completed_by_staff. A repeated report of one session counts once."),
    Column("completed_by_checkin", "integer",
           "Of completed_sessions, those whose evidence is the participant's own check-in (chat or API)."),
    Column("completed_by_calendar", "integer",
           "Of completed_sessions, those whose evidence is an event in the participant's own calendar export "
           "carrying that session's UID (never Bloom's own feed, never a time match alone)."),
    Column("completed_by_staff", "integer",
           "Of completed_sessions, those marked completed by study staff in the admin (audited)."),
    Column("skipped_sessions", "integer",
           "Of planned_sessions, those the participant reported as skipped."),
    Column("missed_sessions", "integer",
           "Of planned_sessions, those neither completed nor skipped: marked missed, or never reported."),
    Column("pending_sessions", "integer",
           "Sessions planned this week that are not yet due at the export (whatever their status). They are in no "
           "other count; a week with pending sessions is not complete."),
    Column("cancelled_sessions", "integer",
           "Sessions of this week taken out of the plan with a reason before they were due (or taken back right "
           "after the coach scheduled them). In no other count; never deleted."),
    Column("replaced_sessions", "integer",
           "Missed or overdue sessions of this week whose place a make-up session took (the make-up is counted "
           "in its own week). In no other count."),
    Column("planned_minutes", "integer", "Sum of the planned durations of planned_sessions, in minutes."),
    Column("completed_minutes", "integer",
           "Sum of the planned durations of completed_sessions, in minutes. Actual time spent is not recorded."),
    Column("adherence_ratio", "float",
           "SECONDARY. completed_sessions / planned_sessions, rounded to 4 decimals; missing when planned_sessions "
           "is 0 (such weeks are 0.0 in protocol_adherence).",
           nullable=True),
    Column("adherent", "boolean",
           "true when adherence_ratio >= 0.8, false below; missing when planned_sessions is 0.", nullable=True),
    Column("late_corrections", "integer",
           "Status changes recorded on this week's sessions after the week closed (a late check-in, a late "
           "calendar import, a make-up replacing a missed session, a staff correction): kept out of this row's "
           "counts, which show the week as it closed. 0 for a week not yet closed."),
    Column("sessions_other_plan_week", "integer",
           "Of this week's counted sessions (planned_sessions + pending_sessions), those the coaching plan files "
           "under another week: the participant moved time zone and the plan's week (their current zone) and the "
           "study week (the enrolment zone) disagree, e.g. a Sunday 20:00 São Paulo session is Monday in Berlin."),
    Column("checkins", "integer",
           "Sessions of this week with at least one check-in made by the week's close (each session once, "
           "whatever its reports: 'done' twice or 'done' then 'skipped' is one), by the session's date, plus "
           "check-ins tied to no session, by their own local date."),
    Column("active_days", "integer",
           "Distinct local days of this week with a completed counted session (the session's day, not the time it "
           "was reported) or a message from the participant."),
    Column("last_active_week", "integer",
           "Latest study_week up to and including this row with active_days > 0; missing if none yet.",
           nullable=True),
    Column("goal_category", "string",
           "Baseline, frozen at enrolment: goal category from a fixed list (language, programming, career, "
           "academic, music, art, sport, other); missing if onboarding had not reached it.", nullable=True),
    Column("weekly_hours", "float",
           "Baseline, frozen at enrolment: weekly time budget in hours; missing if unknown.", nullable=True),
    Column("best_time", "string",
           "Baseline, frozen at enrolment: preferred time of day (morning, midday, afternoon, evening, night, "
           "flexible); missing if unknown.", nullable=True),
    Column("confidence", "integer",
           "Baseline, frozen at enrolment: self-rated confidence 1-10; missing if unknown.", nullable=True),
    Column("dates_shifted", "boolean",
           "true when every date in this file (week_start, exported_at) is shifted (see the codebook's header)."),
    Column("schema_version", "integer", "Version of this export schema; changes when any column changes."),
    Column("exported_at", "datetime",
           "Time the export was made (UTC), identical on all rows; shifted with the other dates when "
           "dates_shifted is true."),
]
COLUMN_NAMES = [c.name for c in COLUMNS]
COLUMN_BY_NAME = {c.name: c for c in COLUMNS}


def arrow_type(kind: str):
    import pyarrow as pa

    return {"string": pa.string(), "integer": pa.int64(), "float": pa.float64(), "boolean": pa.bool_(),
            "date": pa.date32(), "datetime": pa.timestamp("ms", tz="UTC")}[kind]


def arrow_schema():
    """The codebook as an Arrow schema: the Parquet file's schema must equal it exactly."""
    import pyarrow as pa

    return pa.schema([pa.field(c.name, arrow_type(c.type), nullable=c.nullable) for c in COLUMNS])


def dates_statement(study: Study | None) -> str:
    """Whether and how this study's dates are shifted, said in the codebook and the admin page."""
    if study is None:
        return ("Dates: each study's codebook says whether its dates are shifted (also the `dates_shifted` "
                "column). When shifted, every date in the file (week_start, exported_at) is moved by one "
                "secret whole-week offset (up to 26 weeks, never 0) shared by the whole study.")
    if not study.date_shift_enabled:
        return "Dates: not shifted. week_start and exported_at are real calendar dates (dates_shifted = false)."
    return ("Dates: shifted (dates_shifted = true). Every date in the file (week_start, exported_at) is moved by "
            "one secret whole-week offset (up to 26 weeks, never 0) that is the same for every row of the study, "
            "so intervals, weekdays, study weeks and the alignment between participants are kept, and "
            "week_start - 7·(study_week - 1) is the same shifted Monday for everybody: the file holds no real "
            "date to undo the offset with. It does not hide dates from someone who knows when the study really "
            "ran: the shift stops rows being matched to outside calendars, not more.")


def outcome_statement(study: Study | None) -> str:
    """The pre-registered outcome, with this study's intended use in its own words."""
    intended = ("each study's intended sessions per week (the `intended_sessions` column)" if study is None else
                f"{study.intended_sessions_per_week} sessions per week"
                + (f" (the protocol: {study.intended_use!r})" if study.intended_use else ""))
    return ("Primary outcome: `protocol_adherence`, completed sessions with evidence (a check-in, the session's "
            "own event in the participant's calendar, or staff) against the intended use stated when the study "
            f"was created, {intended}, for every participant-week from enrolment to the study's end or the "
            "withdrawal; a week with nothing planned is 0, not missing. The plan-based `adherence_ratio` is "
            f"secondary. A week closes {WEEK_CLOSE_HOURS} hours after it ends; its counts are then frozen and later "
            "changes are counted in `late_corrections`.")


def reading_instructions() -> list[str]:
    pandas_dtypes = {c.name: TYPES[c.type]["pandas"] for c in COLUMNS if c.type not in ("date", "datetime")}
    dates = [c.name for c in COLUMNS if c.type in ("date", "datetime")]
    return [
        "pandas: `pd.read_csv(path, dtype_backend=\"numpy_nullable\", parse_dates=" + repr(dates) + ")` "
        "or `pd.read_parquet(path, dtype_backend=\"numpy_nullable\")`; the nullable dtypes "
        f"({', '.join(sorted(set(pandas_dtypes.values())))}) keep a missing integer or boolean from turning "
        "the column into float or object.",
        "pyarrow: `pyarrow.csv.read_csv(path, convert_options=pyarrow.csv.ConvertOptions("
        "strings_can_be_null=True))` infers every column as the Arrow type below (timestamps in seconds); "
        "`pyarrow.parquet.read_table` gives exactly the schema below.",
        "R: `readr::read_csv(path, na = \"\")`, or `arrow::read_parquet(path)`.",
    ]


def codebook_markdown(study: Study | None = None) -> str:
    title = f"# Bloom adherence export — codebook (schema {EXPORT_SCHEMA_VERSION})"
    lines = [
        title + (f": study {study.name!r}" if study is not None else ""),
        "",
        "One row per participant-week (tidy long format), ordered by participant then study_week.",
        "",
        "Missing values: an empty cell in CSV, null in Parquet. Nothing else marks a missing value (no NA, "
        "NaN or empty string); only the columns marked nullable below can be missing.",
        "",
        dates_statement(study),
        "",
        outcome_statement(study),
        "",
        "Weeks are ISO weeks (Monday start) in the time zone the participant had at enrolment, DST-aware. "
        "Only sessions that are due (planned start + duration + grace window passed) are counted; "
        "activity belongs to the session's own date. Use week_complete (or export with "
        "`--complete-weeks-only`) to leave out the current, incomplete week.",
        "",
        "Reading the files:",
        "",
        *[f"- {line}" for line in reading_instructions()],
        "",
        "| column | type | nullable | CSV | Arrow / Parquet | description |",
        "|---|---|---|---|---|---|",
    ]
    lines += [f"| `{c.name}` | {c.type} | {'yes' if c.nullable else 'no'} | {TYPES[c.type]['csv']} | "
              f"{TYPES[c.type]['arrow']} | {c.description} |" for c in COLUMNS]
    lines += ["", "## Summary file (`<out>.summary.csv`)", "",
              "One row per arm and study week, and one per arm with study_week empty for all weeks together "
              "(sums of the weekly rows). Same missing-value convention. " + SUMMARY_NOTE, "",
              "| column | type | nullable | description |", "|---|---|---|---|"]
    lines += [f"| `{c.name}` | {c.type} | {'yes' if c.nullable else 'no'} | {c.description} |"
              for c in SUMMARY_COLUMNS_DOC]
    return "\n".join(lines) + "\n"


SUMMARY_NOTE = (
    "mean_protocol_adherence (the primary outcome's arm mean) weighs every participant-week the same, weeks with "
    "nothing planned included as 0. mean_ratio is the mean of the participant-week plan-based ratios (weeks with "
    "nothing planned left out), pooled_ratio is the sum of completed over the sum of planned sessions; they differ "
    "when participants plan different numbers of sessions, and both can be moved by planning less."
)

SUMMARY_COLUMNS_DOC: list[Column] = [
    Column("arm", "string", "Study arm."),
    Column("study_week", "integer", "Study week; missing on the arm's all-weeks row.", nullable=True),
    Column("participant_weeks", "integer",
           "Rows of the export in this arm (and week): every enrolled participant-week, whatever was planned."),
    Column("mean_protocol_adherence", "float",
           "PRIMARY. Mean of protocol_adherence over participant_weeks (4 decimals); missing when there are none.",
           nullable=True),
    Column("share_protocol_adherent", "float",
           "Share of participant_weeks with protocol_adherent true (4 decimals); missing when there are none.",
           nullable=True),
    Column("weeks_with_plan", "integer", "Of participant_weeks, those with planned_sessions > 0."),
    Column("planned_sessions", "integer", "Sum of planned_sessions."),
    Column("completed_sessions", "integer", "Sum of completed_sessions (with evidence)."),
    Column("skipped_sessions", "integer", "Sum of skipped_sessions."),
    Column("missed_sessions", "integer", "Sum of missed_sessions."),
    Column("mean_ratio", "float",
           "SECONDARY. Mean of adherence_ratio over weeks_with_plan (4 decimals); missing when none.", nullable=True),
    Column("pooled_ratio", "float",
           "SECONDARY. completed_sessions / planned_sessions (4 decimals); missing when nothing was planned.",
           nullable=True),
    Column("share_adherent", "float",
           "SECONDARY. Share of weeks_with_plan with adherent true (4 decimals); missing when none.", nullable=True),
]


def codebook_csv() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["column", "type", "nullable", "arrow_type", "pandas_dtype", "description"])
    for c in COLUMNS:
        writer.writerow([c.name, c.type, "true" if c.nullable else "false", TYPES[c.type]["arrow"],
                         TYPES[c.type]["pandas"], c.description])
    return buffer.getvalue()
