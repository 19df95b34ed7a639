"""research_analysis_example [--learners N] [--seed S] [--weeks W] [--out DIR] [--keep]

The worked example of docs/research-export.md in one command: simulate a two-arm study, export
it exactly as `export_adherence` does (CSV, codebook, summary; validated against the codebook),
read the file back as a statistician would and print the primary analysis. Everything it writes
to the database is rolled back at the end (unless --keep); the files stay in --out."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from coaching.research import adherence, services
from coaching.research.analysis import analysis_report, read_export_csv
from coaching.research.codebook import codebook_markdown
from coaching.research.export import csv_chunks, export_records, summary_csv
from coaching.research.simulation import expected_protocol_adherence, simulate
from coaching.research.validate import validate_export

INTENDED = 3
# A fixed past start and a secret derived from the seed: the same command prints the same figures
# on every database (the randomisation and the simulated behaviour both follow the seed).
START = dt.date(2025, 1, 6)
INTENDED_USE = ("three study sessions a week, as the protocol asks of every participant (the simulated "
                "example's pre-registered intended use)")


class _Rollback(Exception):
    pass


class Command(BaseCommand):
    help = "Simulate a two-arm study, export it, and print the primary analysis (docs/research-export.md)."

    def add_arguments(self, parser):
        parser.add_argument("--learners", type=int, default=240)
        parser.add_argument("--seed", type=int, default=20261204)
        parser.add_argument("--weeks", type=int, default=8)
        parser.add_argument("--out", help="directory for the files (default: a new temporary directory)")
        parser.add_argument("--keep", action="store_true", help="keep the simulated study in the database")

    def handle(self, *args, **opts):
        if opts["learners"] < 8 or not 4 <= opts["weeks"] <= 52:
            raise CommandError("--learners must be >= 8 and --weeks between 4 and 52")
        out = Path(opts["out"] or tempfile.mkdtemp(prefix="bloom-analysis-example-"))
        out.mkdir(parents=True, exist_ok=True)
        path = out / "example.csv"
        try:
            with transaction.atomic():
                self._simulate_and_export(opts, path)
                if not opts["keep"]:
                    raise _Rollback
        except _Rollback:
            pass
        rows = read_export_csv(path)
        truth = {arm: expected_protocol_adherence(arm=arm, intended=INTENDED) for arm in ("coach", "tracker")}
        self.stdout.write(f"files: {path} (+ .codebook.md, .summary.csv)\n\n")
        self.stdout.write(analysis_report(rows, truth=truth))

    def _simulate_and_export(self, opts, path: Path) -> None:
        now = timezone.now()
        study = services.study_create(
            name=f"analysis example {opts['seed']} {now:%Y%m%dT%H%M%S}", start_date=START,
            duration_weeks=opts["weeks"], intended_sessions_per_week=INTENDED, intended_use=INTENDED_USE,
            cohort="simulated", secret=f"analysis-example-{opts['seed']}")
        simulate(study=study, n_learners=opts["learners"], seed=opts["seed"])
        exported_at = now.replace(microsecond=0)
        with path.open("w", encoding="utf-8", newline="") as fh:
            for chunk in csv_chunks(export_records(study=study, exported_at=exported_at)):
                fh.write(chunk)
        Path(f"{path}.codebook.md").write_text(codebook_markdown(study), encoding="utf-8")
        weekly, totals = adherence.adherence_by_arm(study=study, as_of=exported_at)
        Path(f"{path}.summary.csv").write_text(summary_csv([*weekly, *totals]), encoding="utf-8")
        report = validate_export(path, "csv", duration_weeks=study.duration_weeks)
        if not report.ok:
            raise CommandError(report.summary())
