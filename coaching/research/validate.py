"""Re-read a written export and check it against the codebook (`export_adherence --validate`).

Reads the file back the way a statistician would receive it, not the records the writer was
given: for CSV every cell is parsed by the codebook's type with the one missing-value convention
(empty cell, only in nullable columns); for Parquet the schema must equal the codebook's Arrow
schema. Then the same row checks run on both: the identities the codebook promises (planned =
completed + skipped + missed, completed = the sum of its evidence sources, the primary outcome
and both ratios and their flags follow from the counts, `week_complete` is false while a session
is pending, late corrections only on closed weeks, one export stamp and schema version, rows grouped by
participant with increasing weeks inside the enrolment window, one shared calendar anchor)."""

from __future__ import annotations

import csv
import datetime as dt
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coaching.research.codebook import COLUMN_BY_NAME, COLUMN_NAMES, COLUMNS, arrow_schema
from coaching.research.conf import ADHERENT_THRESHOLD, EXPORT_SCHEMA_VERSION

MAX_LISTED = 30
_INTEGER = re.compile(r"-?\d+")
_FLOAT = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
_DATETIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@dataclass
class ValidationReport:
    path: str
    format: str
    rows: int = 0
    problems: list[str] = field(default_factory=list)
    n_problems: int = 0

    @property
    def ok(self) -> bool:
        return self.n_problems == 0

    def problem(self, text: str) -> None:
        self.n_problems += 1
        if len(self.problems) < MAX_LISTED:
            self.problems.append(text)

    def summary(self) -> str:
        if self.ok:
            return f"{self.path}: {self.rows} rows, {len(COLUMNS)} columns match the codebook ({self.format})"
        more = self.n_problems - len(self.problems)
        tail = f"\n  … and {more} more" if more > 0 else ""
        return (f"{self.path}: {self.n_problems} problem(s) in {self.rows} rows:\n  "
                + "\n  ".join(self.problems) + tail)


def parse_csv_cell(kind: str, cell: str) -> Any:
    """The typed value of a non-empty CSV cell, or ValueError naming what was expected."""
    if kind == "string":
        return cell
    if kind == "integer":
        if not _INTEGER.fullmatch(cell):
            raise ValueError("expected an integer")
        return int(cell)
    if kind == "float":
        # A float always carries a point or an exponent, so no reader takes the column for integers.
        if not _FLOAT.fullmatch(cell) or not ({".", "e", "E"} & set(cell)):
            raise ValueError("expected a decimal number with a point")
        return float(cell)
    if kind == "boolean":
        if cell not in ("true", "false"):
            raise ValueError("expected true or false")
        return cell == "true"
    if kind == "date":
        if len(cell) != 10:
            raise ValueError("expected YYYY-MM-DD")
        return dt.date.fromisoformat(cell)
    if kind == "datetime":
        if not _DATETIME.fullmatch(cell):
            raise ValueError("expected YYYY-MM-DDTHH:MM:SSZ")
        return dt.datetime.fromisoformat(cell.replace("Z", "+00:00"))
    raise ValueError(f"unknown codebook type {kind}")


def _csv_records(path: Path, report: ValidationReport) -> Iterator[dict]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header != COLUMN_NAMES:
            report.problem(f"header {header!r} differs from the codebook's columns {COLUMN_NAMES!r}")
            return
        for line, cells in enumerate(reader, start=2):
            if len(cells) != len(COLUMN_NAMES):
                report.problem(f"line {line}: {len(cells)} cells, expected {len(COLUMN_NAMES)}")
                continue
            record: dict[str, Any] = {}
            for name, cell in zip(COLUMN_NAMES, cells, strict=True):
                column = COLUMN_BY_NAME[name]
                if cell == "":
                    if not column.nullable:
                        report.problem(f"line {line}: {name} is empty but the codebook says it is never missing")
                    record[name] = None
                    continue
                try:
                    record[name] = parse_csv_cell(column.type, cell)
                except ValueError as exc:
                    report.problem(f"line {line}: {name}={cell!r}: {exc} ({column.type})")
                    record[name] = None
            yield record


def _parquet_records(path: Path, report: ValidationReport) -> Iterator[dict]:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    schema = parquet.schema_arrow
    expected = arrow_schema()
    if schema.names != expected.names:
        report.problem(f"columns {schema.names!r} differ from the codebook's {expected.names!r}")
        return
    for got, want in zip(schema, expected, strict=True):
        if got.type != want.type:
            report.problem(f"{got.name}: Parquet type {got.type}, the codebook says {want.type}")
        if got.nullable != want.nullable:
            report.problem(f"{got.name}: nullable={got.nullable}, the codebook says {want.nullable}")
    for batch in parquet.iter_batches(batch_size=5000):
        for record in batch.to_pylist():
            for name, value in record.items():
                if value is None and not COLUMN_BY_NAME[name].nullable:
                    report.problem(f"{name} is null but the codebook says it is never missing")
            yield record


def check_rows(records: Iterable[dict], report: ValidationReport, *, duration_weeks: int | None = None) -> None:
    """The codebook's row identities, on typed records (None = missing)."""
    seen: set[str] = set()
    current: str | None = None
    last_week = 0
    anchors: set[dt.date] = set()
    stamps: set[Any] = set()
    for i, r in enumerate(records, start=1):
        report.rows += 1
        where = f"row {i} ({r.get('participant_id')}, week {r.get('study_week')})"
        if any(r.get(name) is None and not COLUMN_BY_NAME[name].nullable for name in COLUMN_NAMES):
            continue  # already reported as a missing value; the identities below need every count
        pid, week = r["participant_id"], r["study_week"]
        if pid != current:
            if pid in seen:
                report.problem(f"{where}: participant's rows are not contiguous")
            seen.add(pid)
            current, last_week = pid, 0
            if week != r["enrolled_week"]:
                report.problem(f"{where}: first row is not the enrolment week {r['enrolled_week']}")
        elif week != last_week + 1:
            report.problem(f"{where}: follows week {last_week}; weeks must be consecutive")
        last_week = week
        if week < 1 or (duration_weeks is not None and week > duration_weeks):
            report.problem(f"{where}: study_week outside 1..{duration_weeks}")
        if r["withdrawn"] != (r["withdrawn_week"] is not None):
            report.problem(f"{where}: withdrawn={r['withdrawn']} but withdrawn_week={r['withdrawn_week']}")
        if r["withdrawn_week"] is not None and week > r["withdrawn_week"]:
            report.problem(f"{where}: row after the withdrawal week {r['withdrawn_week']}")
        planned, completed = r["planned_sessions"], r["completed_sessions"]
        if planned != completed + r["skipped_sessions"] + r["missed_sessions"]:
            report.problem(f"{where}: planned_sessions != completed + skipped + missed")
        if min(planned, completed, r["skipped_sessions"], r["missed_sessions"], r["pending_sessions"],
               r["planned_minutes"], r["completed_minutes"], r["checkins"], r["active_days"],
               r["cancelled_sessions"], r["replaced_sessions"], r["late_corrections"]) < 0:
            report.problem(f"{where}: a negative count")
        if r["completed_minutes"] > r["planned_minutes"] or r["active_days"] > 7:
            report.problem(f"{where}: completed_minutes > planned_minutes or more than 7 active days")
        if planned == 0:
            if r["adherence_ratio"] is not None or r["adherent"] is not None:
                report.problem(f"{where}: nothing planned, so adherence_ratio and adherent must be missing")
        else:
            if r["adherence_ratio"] != round(completed / planned, 4):
                report.problem(f"{where}: adherence_ratio {r['adherence_ratio']} != {completed}/{planned}")
            if r["adherent"] != (completed >= ADHERENT_THRESHOLD * planned):
                report.problem(f"{where}: adherent does not follow from the ratio")
        if completed != r["completed_by_checkin"] + r["completed_by_calendar"] + r["completed_by_staff"]:
            report.problem(f"{where}: completed_sessions != the sum of its evidence sources")
        intended = r["intended_sessions"]
        if intended < 1 or r["protocol_adherence"] != round(min(completed, intended) / intended, 4):
            report.problem(f"{where}: protocol_adherence {r['protocol_adherence']} != min({completed}, "
                           f"{intended}) / {intended}")
        if r["protocol_adherent"] != (completed >= intended):
            report.problem(f"{where}: protocol_adherent does not follow from the counts")
        if r["late_corrections"] and not r["week_closed"]:
            report.problem(f"{where}: late corrections on a week that has not closed")
        if r["sessions_other_plan_week"] > planned + r["pending_sessions"]:
            report.problem(f"{where}: sessions_other_plan_week exceeds the week's counted sessions")
        if r["pending_sessions"] > 0 and r["week_complete"]:
            report.problem(f"{where}: week_complete with sessions still pending")
        if r["last_active_week"] is not None and r["last_active_week"] > week:
            report.problem(f"{where}: last_active_week is after the row's week")
        if r["schema_version"] != EXPORT_SCHEMA_VERSION:
            report.problem(f"{where}: schema_version {r['schema_version']}, expected {EXPORT_SCHEMA_VERSION}")
        start = r["week_start"]
        if start.weekday() != 0:
            report.problem(f"{where}: week_start {start} is not a Monday")
        anchors.add(start - dt.timedelta(days=7 * (week - 1)))
        stamps.add((r["exported_at"], r["dates_shifted"]))
    if len(anchors) > 1:
        report.problem(f"week_start - 7·(study_week - 1) takes {len(anchors)} values; the study has one calendar")
    if len(stamps) > 1:
        report.problem("exported_at or dates_shifted differ between rows of one export")


def validate_export(path: str | Path, fmt: str, *, duration_weeks: int | None = None,
                    expected_rows: int | None = None) -> ValidationReport:
    path = Path(path)
    report = ValidationReport(path=str(path), format=fmt)
    records = _parquet_records(path, report) if fmt == "parquet" else _csv_records(path, report)
    check_rows(records, report, duration_weeks=duration_weeks)
    if expected_rows is not None and report.rows != expected_rows:
        report.problem(f"{report.rows} rows read back, {expected_rows} written")
    return report
