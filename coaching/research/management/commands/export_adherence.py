"""export_adherence --study <id|name> --format csv|parquet --out PATH [--codebook PATH]
[--complete-weeks-only] [--validate]"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from tqdm import tqdm

from coaching.research import adherence, selectors, services
from coaching.research.codebook import codebook_markdown
from coaching.research.export import csv_chunks, export_records, summary_csv, write_parquet
from coaching.research.models import Enrollment
from coaching.research.validate import validate_export


class Command(BaseCommand):
    help = ("Export the study's weekly adherence (one row per participant-week) with its codebook and a per-arm "
            "summary; --validate re-reads the written file and checks it against the codebook.")

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="study id (UUID, as the admin shows it) or exact name")
        parser.add_argument("--format", choices=["csv", "parquet"], default="csv")
        parser.add_argument("--out", required=True, help="output file ('-' = stdout, csv only)")
        parser.add_argument("--codebook", help="codebook path (default: <out>.codebook.md)")
        parser.add_argument("--summary", help="per-arm summary path (default: <out>.summary.csv)")
        parser.add_argument("--complete-weeks-only", action="store_true",
                            help="leave out rows whose week_complete is false (the current week, pending sessions)")
        parser.add_argument("--validate", action="store_true",
                            help="after writing, read the file back and check it against the codebook "
                                 "(exit code 1 on any mismatch)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **opts):
        key = opts["study"]
        study = selectors.study_find(key)
        if study is None:
            raise CommandError(f"no study {key!r}")
        fmt, out_path = opts["format"], opts["out"]
        if out_path == "-" and (fmt == "parquet" or opts["validate"]):
            raise CommandError("parquet and --validate need a file, not stdout")
        exported_at = timezone.now().replace(microsecond=0)
        complete_only = opts["complete_weeks_only"]
        log = services.export_log_start(study=study, user=None, via="command", fmt=fmt)
        # The progress total is an estimate (participants × weeks); the true count is logged.
        estimate = Enrollment.objects.filter(study=study).count() * study.duration_weeks
        records = tqdm(
            export_records(study=study, exported_at=exported_at, complete_weeks_only=complete_only),
            total=estimate, unit="row", disable=opts["no_progress"], file=sys.stderr,
        )
        count = 0

        def counted():
            nonlocal count
            for record in records:
                count += 1
                yield record

        if fmt == "parquet":
            write_parquet(counted(), out_path)
        else:
            out = sys.stdout if out_path == "-" else open(out_path, "w", encoding="utf-8", newline="")  # noqa: SIM115
            try:
                for chunk in csv_chunks(counted()):
                    out.write(chunk)
            finally:
                if out is not sys.stdout:
                    out.close()
        services.export_log_finish(log_id=log.pk, row_count=count)
        if out_path == "-":
            return
        codebook = Path(opts["codebook"] or f"{out_path}.codebook.md")
        codebook.write_text(codebook_markdown(study), encoding="utf-8")
        summary = Path(opts["summary"] or f"{out_path}.summary.csv")
        weekly, totals = adherence.adherence_by_arm(study=study, as_of=exported_at,
                                                    complete_weeks_only=complete_only)
        summary.write_text(summary_csv([*weekly, *totals]), encoding="utf-8")
        self.stderr.write(f"wrote {count} rows to {out_path}, the codebook to {codebook} and the summary to {summary}")
        if opts["validate"]:
            report = validate_export(out_path, fmt, duration_weeks=study.duration_weeks, expected_rows=count)
            if not report.ok:
                raise CommandError(f"validation failed: {report.summary()}", returncode=1)
            self.stderr.write(f"validated: {report.summary()}")
