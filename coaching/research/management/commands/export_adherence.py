"""export_adherence --study <id|name> --format csv|parquet --out PATH [--codebook PATH]"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from tqdm import tqdm

from coaching.research import services
from coaching.research.export import codebook_markdown, csv_chunks, export_records, parquet_available, write_parquet
from coaching.research.models import Enrollment, Study


class Command(BaseCommand):
    help = "Export the study's weekly adherence (one row per participant-week) plus a codebook."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="study id or exact name")
        parser.add_argument("--format", choices=["csv", "parquet"], default="csv")
        parser.add_argument("--out", required=True, help="output file ('-' = stdout, csv only)")
        parser.add_argument("--codebook", help="codebook path (default: <out>.codebook.md)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **opts):
        key = opts["study"]
        study = Study.objects.filter(pk=int(key)).first() if key.isdigit() else Study.objects.filter(name=key).first()
        if study is None:
            raise CommandError(f"no study {key!r}")
        fmt = opts["format"]
        if fmt == "parquet" and not parquet_available():
            raise CommandError("parquet needs pyarrow; use --format csv")
        if fmt == "parquet" and opts["out"] == "-":
            raise CommandError("parquet cannot go to stdout")
        exported_at = timezone.now().replace(microsecond=0)
        log = services.export_log_start(study=study, user=None, via="command", fmt=fmt)
        # The progress total is an estimate (participants × weeks); the true count is logged.
        estimate = Enrollment.objects.filter(study=study).count() * study.duration_weeks
        records = tqdm(
            export_records(study=study, exported_at=exported_at), total=estimate, unit="row",
            disable=opts["no_progress"], file=sys.stderr,
        )
        count = 0

        def counted():
            nonlocal count
            for record in records:
                count += 1
                yield record

        if fmt == "parquet":
            write_parquet(counted(), opts["out"])
        else:
            out = sys.stdout if opts["out"] == "-" else open(opts["out"], "w", encoding="utf-8", newline="")  # noqa: SIM115
            try:
                for chunk in csv_chunks(counted()):
                    out.write(chunk)
            finally:
                if out is not sys.stdout:
                    out.close()
        services.export_log_finish(log_id=log.pk, row_count=count)
        if opts["out"] != "-":
            codebook = Path(opts["codebook"] or f"{opts['out']}.codebook.md")
            codebook.write_text(codebook_markdown(), encoding="utf-8")
            self.stderr.write(f"wrote {count} rows to {opts['out']} and the codebook to {codebook}")
