"""The adherence export: tidy long format, one row per participant-week (columns: the codebook,
`coaching.research.codebook`), written as CSV or Parquet.

Only pseudonymous ids, arm/cohort labels, counts and fixed-choice covariates leave the database:
no names, emails, goals or message text (the profile's free-text `primary_goal` is never selected).
Rows are produced lazily from the server-side cursor in `adherence.adherence_rows`, so CSV and
Parquet writers hold one batch at a time whatever the study size."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import hmac
import io
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from coaching.research.adherence import ADHERENCE_COLUMNS, adherence_rows
from coaching.research.codebook import COLUMN_NAMES, COLUMNS, SUMMARY_COLUMNS_DOC, arrow_schema
from coaching.research.conf import EXPORT_SCHEMA_VERSION, PSEUDONYM_HEX_CHARS, PSEUDONYM_PREFIX
from coaching.research.models import Study
from coaching.research.selectors import study_monday
from coaching.research.services import export_log_finish, study_date_shift_days


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


def export_stamp(*, study: Study, exported_at: dt.datetime) -> dt.datetime:
    """The export time as the file shows it: UTC, whole seconds, moved by the study's date shift
    when it has one (the rows' `exported_at` and the file name both use this, so neither leaks
    the real date)."""
    shift = study_date_shift_days(study=study) if study.date_shift_enabled else 0
    return exported_at.astimezone(dt.UTC).replace(microsecond=0) + dt.timedelta(days=shift)


_COUNTS = ["planned_sessions", "completed_sessions", "completed_by_checkin", "completed_by_calendar",
           "completed_by_staff", "skipped_sessions", "missed_sessions", "pending_sessions", "cancelled_sessions",
           "replaced_sessions", "planned_minutes", "completed_minutes", "late_corrections",
           "sessions_other_plan_week", "checkins", "active_days"]


def export_records(*, study: Study, exported_at: dt.datetime, as_of: dt.datetime | None = None,
                   complete_weeks_only: bool = False) -> Iterator[dict]:
    """Typed export rows (None = missing), in COLUMNS order. `complete_weeks_only` drops the rows
    whose week_complete is false (the current week, weeks with pending sessions)."""
    shift = dt.timedelta(days=study_date_shift_days(study=study) if study.date_shift_enabled else 0)
    monday = study_monday(study) + shift
    stamp = export_stamp(study=study, exported_at=exported_at)
    index = {name: i for i, name in enumerate(ADHERENCE_COLUMNS)}
    counts = [(name, index[name]) for name in _COUNTS]
    intended = int(study.intended_sessions_per_week)
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
        typed = {name: int(row[i]) for name, i in counts}
        yield {
            "participant_id": participant,
            "arm": row[index["arm"]],
            "stratum": row[index["stratum"]],
            "cohort": study.cohort or None,
            "timezone": row[index["timezone"]],
            "timezone_at_export": row[index["timezone_at_export"]] or None,
            "enrolled_week": int(row[index["enrolled_week"]]),
            "withdrawn": withdrawn_week is not None,
            "withdrawn_week": withdrawn_week,
            "study_week": week,
            "week_start": monday + dt.timedelta(days=7 * (week - 1)),
            "week_complete": week_complete,
            "week_closed": bool(row[index["week_closed"]]),
            "intended_sessions": intended,
            "protocol_adherence": round(float(row[index["protocol_adherence"]]), 4),
            "protocol_adherent": bool(row[index["protocol_adherent"]]),
            **{name: typed[name] for name in _COUNTS[:12]},
            "adherence_ratio": None if ratio is None else round(float(ratio), 4),
            "adherent": None if adherent is None else bool(adherent),
            **{name: typed[name] for name in _COUNTS[12:]},
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


SUMMARY_COLUMNS = [c.name for c in SUMMARY_COLUMNS_DOC]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def summary_csv(rows: Iterable[Any]) -> str:
    """`rows`: adherence.ArmStats. Same conventions as the export (empty = missing); columns and
    their meaning: `codebook.SUMMARY_COLUMNS_DOC`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    for r in rows:
        values = [r.arm, r.study_week, r.participant_weeks, _rounded(r.mean_protocol_adherence),
                  _rounded(r.share_protocol_adherent), r.weeks_with_plan, r.planned_sessions,
                  r.completed_sessions, r.skipped_sessions, r.missed_sessions, _rounded(r.mean_ratio),
                  _rounded(r.pooled_ratio), _rounded(r.share_adherent)]
        writer.writerow([csv_cell(v) for v in values])
    return buffer.getvalue()


def logged_csv_stream(*, study: Study, log_id: int, exported_at: dt.datetime,
                      complete_weeks_only: bool = False) -> Iterator[str]:
    """CSV chunks of a study's export; the export log gets its row count once the last row is out
    (a client that disconnects early leaves row_count empty: the log shows it was incomplete)."""
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
