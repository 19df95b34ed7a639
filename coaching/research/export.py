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
from decimal import Decimal
from typing import Any

from coaching.research.conf import EXPORT_SCHEMA_VERSION, PSEUDONYM_HEX_CHARS
from coaching.research.models import Study
from coaching.research.selectors import ADHERENCE_COLUMNS, adherence_rows, study_monday


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # string | integer | float | boolean | date | datetime
    description: str


COLUMNS: list[Column] = [
    Column("participant_id", "string",
           f"Pseudonymous participant id: first {PSEUDONYM_HEX_CHARS} hex chars of HMAC-SHA256(study secret, "
           "learner research_id). Stable across exports of the same study; differs between studies."),
    Column("arm", "string", "Randomised study arm (coach = multi-agent coach, tracker = plain calendar tracker)."),
    Column("cohort", "string", "Study cohort label."),
    Column("study_week", "integer",
           "Week number from the study start: 1 = the ISO week (Monday start) containing the study start date. "
           "Rows run from the participant's enrolment week to the earliest of study end, withdrawal week and "
           "the export's current week (which may be partial)."),
    Column("week_start", "date",
           "Monday of the study week (ISO 8601 date). When the study enables date shifting, shifted by a "
           "per-participant whole number of weeks, identical for all of that participant's rows, so intervals "
           "and weekdays are preserved."),
    Column("planned_sessions", "integer",
           "Sessions whose planned start falls in this week, in the participant's local time zone "
           "(any status: planned, completed, skipped, missed)."),
    Column("completed_sessions", "integer",
           "Of those, sessions with status completed (self report, calendar import or staff)."),
    Column("planned_minutes", "integer", "Sum of planned durations of planned_sessions, in minutes."),
    Column("completed_minutes", "integer", "Sum of planned durations of completed_sessions, in minutes."),
    Column("adherence_ratio", "float",
           "completed_sessions / planned_sessions, rounded to 4 decimals; NA (empty) when nothing was planned."),
    Column("adherent", "boolean", "1 when adherence_ratio >= 0.8, 0 below; NA (empty) when nothing was planned."),
    Column("checkins", "integer", "Check-ins recorded this week (local time), whatever their outcome."),
    Column("active_days", "integer",
           "Distinct local calendar days this week with a completed session or a message from the participant."),
    Column("last_active_week", "integer",
           "Latest study_week up to and including this row with active_days > 0; NA if none yet."),
    Column("goal_category", "string",
           "Baseline: goal category from a fixed list (language, programming, career, academic, music, art, "
           "sport, other); NA if onboarding did not reach it. Also the randomisation stratum."),
    Column("weekly_hours", "float", "Baseline: weekly time budget in hours stated at onboarding; NA if unknown."),
    Column("best_time", "string",
           "Baseline: preferred time of day (morning, midday, afternoon, evening, night, flexible); NA if unknown."),
    Column("confidence", "integer", "Baseline: self-rated confidence 1-10 at onboarding; NA if unknown."),
    Column("schema_version", "string", "Version of this export schema (changes when any column changes)."),
    Column("exported_at", "datetime", "UTC time the export started (ISO 8601), identical for all rows of an export."),
]
COLUMN_NAMES = [c.name for c in COLUMNS]


def pseudonymous_id(*, secret: str, research_id: Any) -> str:
    """HMAC-SHA256 of the canonical research UUID under the study secret, truncated."""
    canonical = str(uuid.UUID(str(research_id)))
    digest = hmac.new(secret.encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256).hexdigest()
    return digest[:PSEUDONYM_HEX_CHARS]


def _num(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    return value


def export_records(*, study: Study, exported_at: dt.datetime, as_of: dt.datetime | None = None) -> Iterator[dict]:
    """Typed export rows (None = NA), in COLUMNS order."""
    monday = study_monday(study)
    stamp = exported_at.astimezone(dt.UTC).isoformat(timespec="seconds")
    index = {name: i for i, name in enumerate(ADHERENCE_COLUMNS)}
    last_research_id: Any = object()
    participant = ""
    for row in adherence_rows(study=study, as_of=as_of or exported_at):
        research_id = row[index["research_id"]]
        if research_id != last_research_id:  # rows arrive grouped by participant
            participant = pseudonymous_id(secret=study.secret, research_id=research_id)
            last_research_id = research_id
        week = int(row[index["study_week"]])
        shift = int(row[index["date_shift_days"]] or 0) if study.date_shift_enabled else 0
        ratio = row[index["adherence_ratio"]]
        adherent = row[index["adherent"]]
        yield {
            "participant_id": participant,
            "arm": row[index["arm"]],
            "cohort": study.cohort,
            "study_week": week,
            "week_start": monday + dt.timedelta(days=7 * (week - 1) + shift),
            "planned_sessions": int(row[index["planned_sessions"]]),
            "completed_sessions": int(row[index["completed_sessions"]]),
            "planned_minutes": int(row[index["planned_minutes"]]),
            "completed_minutes": int(row[index["completed_minutes"]]),
            "adherence_ratio": None if ratio is None else round(float(ratio), 4),
            "adherent": None if adherent is None else bool(adherent),
            "checkins": int(row[index["checkins"]]),
            "active_days": int(row[index["active_days"]]),
            "last_active_week": _num(row[index["last_active_week"]]),
            "goal_category": row[index["goal_category"]] or None,
            "weekly_hours": None if row[index["weekly_hours"]] is None else float(row[index["weekly_hours"]]),
            "best_time": row[index["best_time"]] or None,
            "confidence": row[index["confidence"]],
            "schema_version": EXPORT_SCHEMA_VERSION,
            "exported_at": stamp,
        }


def _csv_cell(value: Any) -> Any:
    if value is None:
        return "NA"
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


class _Line:
    """csv.writer target that hands back what was written instead of buffering it."""

    def write(self, value: str) -> str:
        return value


def csv_chunks(records: Iterable[dict], *, rows_per_chunk: int = 500) -> Iterator[str]:
    """CSV text in chunks of `rows_per_chunk` rows; the header first. NA marks missing values."""
    writer = csv.writer(_Line(), lineterminator="\n")
    yield writer.writerow(COLUMN_NAMES)
    chunk: list[str] = []
    for record in records:
        chunk.append(writer.writerow([_csv_cell(record[name]) for name in COLUMN_NAMES]))
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


def _arrow_schema():
    import pyarrow as pa

    types = {"string": pa.string(), "integer": pa.int64(), "float": pa.float64(), "boolean": pa.bool_(),
             "date": pa.date32(), "datetime": pa.string()}
    return pa.schema([pa.field(c.name, types[c.type], nullable=True) for c in COLUMNS])


def write_parquet(records: Iterable[dict], sink: Any, *, batch_rows: int = 5000) -> int:
    """Write records to `sink` (path or binary file) as Parquet in row groups; returns row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _arrow_schema()
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


def codebook_markdown() -> str:
    lines = [
        f"# Bloom adherence export — codebook (schema {EXPORT_SCHEMA_VERSION})",
        "",
        "One row per participant-week (tidy long format). Missing values are `NA` in CSV and null in Parquet.",
        "Weeks are ISO weeks (Monday start) of the participant's local time zone, DST-aware.",
        "",
        "| column | type | description |",
        "|---|---|---|",
    ]
    lines += [f"| `{c.name}` | {c.type} | {c.description} |" for c in COLUMNS]
    return "\n".join(lines) + "\n"


def codebook_csv() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["column", "type", "description"])
    for c in COLUMNS:
        writer.writerow([c.name, c.type, c.description])
    return buffer.getvalue()


def logged_csv_stream(*, study: Study, log_id: int, exported_at: dt.datetime) -> Iterator[str]:
    """CSV chunks of a study's export; the export log gets its row count once the last row is out
    (a client that disconnects early leaves row_count empty: the log shows it was incomplete)."""
    from coaching.research.services import export_log_finish

    count = 0

    def counted() -> Iterator[dict]:
        nonlocal count
        for record in export_records(study=study, exported_at=exported_at):
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
