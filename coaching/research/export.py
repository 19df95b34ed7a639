"""The adherence export: tidy long format, one row per participant-week, plus its codebook.

Only pseudonymous ids, arm/cohort labels, counts and fixed-choice covariates leave the database:
no names, emails, goals or message text (the profile's free-text `primary_goal` is never selected).
Rows are produced lazily from the server-side cursor in `selectors.adherence_rows`, so CSV and
Parquet writers hold one batch at a time whatever the study size."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import hmac
import io
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from coaching.research.conf import EXPORT_SCHEMA_VERSION, PSEUDONYM_HEX_CHARS, PSEUDONYM_PREFIX
from coaching.research.models import Study
from coaching.research.selectors import ADHERENCE_COLUMNS, adherence_rows, study_monday


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


def pseudonymous_id(*, study: Study, research_id: Any) -> str:
    """HMAC-SHA256 under the study secret of the study's id and the canonical research UUID.
    The study id is in the message so that two studies given the same secret still get disjoint
    ids; the letter prefix keeps the column a string for every reader."""
    canonical = str(uuid.UUID(str(research_id)))
    message = f"participant:{study.pk}:{canonical}".encode()
    digest = hmac.new(study.secret.encode("utf-8"), message, hashlib.sha256).hexdigest()
    return PSEUDONYM_PREFIX + digest[:PSEUDONYM_HEX_CHARS]


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def export_records(*, study: Study, exported_at: dt.datetime, as_of: dt.datetime | None = None,
                   complete_weeks_only: bool = False) -> Iterator[dict]:
    """Typed export rows (None = missing), in COLUMNS order. `complete_weeks_only` drops the rows
    whose week_complete is false (the current week, weeks with pending sessions)."""
    from coaching.research.services import study_date_shift_days

    shift = dt.timedelta(days=study_date_shift_days(study=study) if study.date_shift_enabled else 0)
    monday = study_monday(study) + shift
    stamp = exported_at.astimezone(dt.UTC).replace(microsecond=0) + shift
    index = {name: i for i, name in enumerate(ADHERENCE_COLUMNS)}
    counts = [(name, index[name]) for name in ("planned_sessions", "completed_sessions", "skipped_sessions",
                                               "missed_sessions", "pending_sessions", "planned_minutes",
                                               "completed_minutes")]
    last_research_id: Any = object()
    participant = ""
    for row in adherence_rows(study=study, as_of=as_of or exported_at):
        week_complete = bool(row[index["week_complete"]])
        if complete_weeks_only and not week_complete:
            continue
        research_id = row[index["research_id"]]
        if research_id != last_research_id:  # rows arrive grouped by participant
            participant = pseudonymous_id(study=study, research_id=research_id)
            last_research_id = research_id
        week = int(row[index["study_week"]])
        ratio = row[index["adherence_ratio"]]
        adherent = row[index["adherent"]]
        withdrawn_week = _int_or_none(row[index["withdrawn_week"]])
        hours = row[index["weekly_hours"]]
        yield {
            "participant_id": participant,
            "arm": row[index["arm"]],
            "stratum": row[index["stratum"]],
            "cohort": study.cohort or None,
            "timezone": row[index["timezone"]],
            "enrolled_week": int(row[index["enrolled_week"]]),
            "withdrawn": withdrawn_week is not None,
            "withdrawn_week": withdrawn_week,
            "study_week": week,
            "week_start": monday + dt.timedelta(days=7 * (week - 1)),
            "week_complete": week_complete,
            **{name: int(row[i]) for name, i in counts},
            "adherence_ratio": None if ratio is None else round(float(ratio), 4),
            "adherent": None if adherent is None else bool(adherent),
            "checkins": int(row[index["checkins"]]),
            "active_days": int(row[index["active_days"]]),
            "last_active_week": _int_or_none(row[index["last_active_week"]]),
            "goal_category": row[index["goal_category"]] or None,
            "weekly_hours": None if hours is None else float(hours),
            "best_time": row[index["best_time"]] or None,
            "confidence": _int_or_none(row[index["confidence"]]),
            "dates_shifted": bool(study.date_shift_enabled),
            "schema_version": EXPORT_SCHEMA_VERSION,
            "exported_at": stamp,
        }


def csv_cell(value: Any) -> str:
    """The one missing-value convention: an empty cell. Booleans are true/false, datetimes ISO 8601
    in UTC with a Z, floats always carry a decimal point (so 1.0 never reads as an integer)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _column_formatter(kind: str):
    """csv_cell specialised for one codebook type: the writer calls it for every cell, so it skips
    the type tests (the export's hot path). Same output as csv_cell for that type."""
    if kind == "string":
        return lambda v: "" if v is None else v
    if kind == "integer":
        return lambda v: "" if v is None else str(v)
    if kind == "datetime":
        last: list[Any] = [None, ""]  # one export stamp for every row: format it once

        def stamp(v: Any) -> str:
            if v is None:
                return ""
            if v is not last[0]:
                last[0], last[1] = v, csv_cell(v)
            return last[1]

        return stamp
    return csv_cell


_FORMATTERS = [(c.name, _column_formatter(c.type)) for c in COLUMNS]


class _Line:
    """csv.writer target that hands back what was written instead of buffering it."""

    def write(self, value: str) -> str:
        return value


def csv_chunks(records: Iterable[dict], *, rows_per_chunk: int = 500) -> Iterator[str]:
    """CSV text in chunks of `rows_per_chunk` rows; the header first; missing values are empty cells."""
    writer = csv.writer(_Line(), lineterminator="\n")
    yield writer.writerow(COLUMN_NAMES)
    chunk: list[str] = []
    for record in records:
        chunk.append(writer.writerow([fmt(record[name]) for name, fmt in _FORMATTERS]))
        if len(chunk) >= rows_per_chunk:
            yield "".join(chunk)
            chunk = []
    if chunk:
        yield "".join(chunk)


def parquet_available() -> bool:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def arrow_type(kind: str):
    import pyarrow as pa

    return {"string": pa.string(), "integer": pa.int64(), "float": pa.float64(), "boolean": pa.bool_(),
            "date": pa.date32(), "datetime": pa.timestamp("ms", tz="UTC")}[kind]


def arrow_schema():
    """The codebook as an Arrow schema: the Parquet file's schema must equal it exactly."""
    import pyarrow as pa

    return pa.schema([pa.field(c.name, arrow_type(c.type), nullable=c.nullable) for c in COLUMNS])


def write_parquet(records: Iterable[dict], sink: Any, *, batch_rows: int = 5000) -> int:
    """Write records to `sink` (path or binary file) as Parquet in row groups; returns row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema()
    count = 0
    with pq.ParquetWriter(sink, schema) as writer:
        batch: list[dict] = []
        for record in records:
            batch.append(record)
            if len(batch) >= batch_rows:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                count += len(batch)
                batch = []
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            count += len(batch)
    return count


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
SUMMARY_COLUMNS = ["arm", "study_week", "participant_weeks", "weeks_with_plan", "planned_sessions",
                   "completed_sessions", "skipped_sessions", "missed_sessions", "mean_ratio", "pooled_ratio",
                   "share_adherent"]


def summary_csv(rows: Iterable[Any]) -> str:
    """`rows`: selectors.ArmStats. Same conventions as the export (empty = missing)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    for r in rows:
        values = [r.arm, r.study_week, r.participant_weeks, r.weeks_with_plan, r.planned_sessions,
                  r.completed_sessions, r.skipped_sessions, r.missed_sessions,
                  None if r.mean_ratio is None else round(r.mean_ratio, 4),
                  None if r.pooled_ratio is None else round(r.pooled_ratio, 4),
                  None if r.share_adherent is None else round(r.share_adherent, 4)]
        writer.writerow([csv_cell(v) for v in values])
    return buffer.getvalue()


def codebook_csv() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["column", "type", "nullable", "arrow_type", "pandas_dtype", "description"])
    for c in COLUMNS:
        writer.writerow([c.name, c.type, "true" if c.nullable else "false", TYPES[c.type]["arrow"],
                         TYPES[c.type]["pandas"], c.description])
    return buffer.getvalue()


def logged_csv_stream(*, study: Study, log_id: int, exported_at: dt.datetime,
                      complete_weeks_only: bool = False) -> Iterator[str]:
    """CSV chunks of a study's export; the export log gets its row count once the last row is out
    (a client that disconnects early leaves row_count empty: the log shows it was incomplete)."""
    from coaching.research.services import export_log_finish

    count = 0

    def counted() -> Iterator[dict]:
        nonlocal count
        for record in export_records(study=study, exported_at=exported_at, complete_weeks_only=complete_weeks_only):
            count += 1
            yield record

    yield from csv_chunks(counted())
    export_log_finish(log_id=log_id, row_count=count)


async def as_async_iterator(chunks: Iterator[str]):
    """Wrap a sync generator for ASGI. Django buffers a sync iterator completely under ASGI; this
    pulls one chunk at a time in the request's sync thread (where the DB connection lives)."""
    from asgiref.sync import sync_to_async

    sentinel = object()
    step = sync_to_async(next, thread_sensitive=True)
    while True:
        chunk = await step(chunks, sentinel)
        if chunk is sentinel:
            return
        yield chunk
