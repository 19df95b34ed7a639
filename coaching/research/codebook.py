"""The adherence export's codebook: every column with its type and meaning, how each type is
written and read (CSV, Arrow/Parquet, pandas), and the codebook as Markdown, CSV and an Arrow
schema. The writers (`coaching.research.export`) and the validator are built from it."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from coaching.research.conf import EXPORT_SCHEMA_VERSION, PSEUDONYM_HEX_CHARS, PSEUDONYM_PREFIX
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
    Column("enrolled_week", "integer",
           "Study week of enrolment (1 also for participants enrolled before the study started); the "
           "participant's first row."),
    Column("withdrawn", "boolean",
           "true when the participant withdrew before the export; the same on all of their rows."),
    Column("withdrawn_week", "integer",
           "Study week of the withdrawal (their last row, which may be a partial week); missing when not withdrawn.",
           nullable=True),
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
    Column("planned_sessions", "integer",
           "Sessions planned this week (local time) while enrolled that are due: planned start + duration + the "
           "grace window have passed at the export. = completed + skipped + missed; both skipped and missed "
           "sessions are in this denominator."),
    Column("completed_sessions", "integer",
           "Of planned_sessions, those with status completed (self report, calendar import or staff)."),
    Column("skipped_sessions", "integer",
           "Of planned_sessions, those the participant reported as skipped."),
    Column("missed_sessions", "integer",
           "Of planned_sessions, those neither completed nor skipped: marked missed, or never reported."),
    Column("pending_sessions", "integer",
           "Sessions planned this week that are not yet due at the export (whatever their status). They are in no "
           "other count; a week with pending sessions is not complete."),
    Column("planned_minutes", "integer", "Sum of the planned durations of planned_sessions, in minutes."),
    Column("completed_minutes", "integer",
           "Sum of the planned durations of completed_sessions, in minutes. Actual time spent is not recorded."),
    Column("adherence_ratio", "float",
           "completed_sessions / planned_sessions, rounded to 4 decimals; missing when planned_sessions is 0.",
           nullable=True),
    Column("adherent", "boolean",
           "true when adherence_ratio >= 0.8, false below; missing when planned_sessions is 0.", nullable=True),
    Column("checkins", "integer",
           "Check-ins for this week's counted sessions (by the session's date, also when reported after midnight) "
           "plus check-ins tied to no session, by their own local date."),
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
    lines += ["", "Summary file (`<out>.summary.csv`): one row per arm and study week, and one per arm with "
              "study_week empty for all weeks together; " + SUMMARY_NOTE]
    return "\n".join(lines) + "\n"


SUMMARY_NOTE = (
    "mean_ratio is the mean of the participant-week adherence ratios (weeks with nothing planned left out), "
    "pooled_ratio is the sum of completed over the sum of planned sessions; they differ when participants plan "
    "different numbers of sessions."
)


def codebook_csv() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["column", "type", "nullable", "arrow_type", "pandas_dtype", "description"])
    for c in COLUMNS:
        writer.writerow([c.name, c.type, "true" if c.nullable else "false", TYPES[c.type]["arrow"],
                         TYPES[c.type]["pandas"], c.description])
    return buffer.getvalue()
