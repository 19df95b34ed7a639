"""Load (or refresh) an eval set and the rubric from their data files. Idempotent."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand

from evaluation.services.sets import DEFAULT_RUBRIC_FILE, DEFAULT_SET_FILE, eval_set_load_file, rubric_load_file


class Command(BaseCommand):
    help = "Load an evaluation set (transcripts) and rubric from JSON data files; safe to run repeatedly."

    def add_arguments(self, parser):
        parser.add_argument("--file", default=str(DEFAULT_SET_FILE))
        parser.add_argument("--rubric", default=str(DEFAULT_RUBRIC_FILE))

    def handle(self, *args, **opts):
        rubric = rubric_load_file(path=Path(opts["rubric"]))
        eval_set = eval_set_load_file(path=Path(opts["file"]))
        self.stdout.write(f"{eval_set}: {eval_set.transcripts.count()} transcripts; {rubric}")
