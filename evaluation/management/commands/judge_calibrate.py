"""Measure the judge against the hand-scored calibration set and store the result: per rubric
dimension, Spearman and exact-match agreement with the hand scores. A comparison counts judge
scores only for a judge whose newest complete calibration reaches the thresholds on every
dimension (`evaluate --baseline` looks it up)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from evaluation.compare import Thresholds
from evaluation.services.calibration import JUDGE_CALIBRATION_FILE, judge_calibrate
from evaluation.services.sets import rubric_load_file


class Command(BaseCommand):
    help = "Score the judge calibration set with the judge; report and store its agreement with the hand scores."

    def add_arguments(self, parser):
        parser.add_argument("--judge-model", default=None, help="default: BLOOM_JUDGE_LLM (else BLOOM_LLM)")
        parser.add_argument("--file", default=str(JUDGE_CALIBRATION_FILE), help="the judge calibration set")
        parser.add_argument("--limit", type=int, default=None,
                            help="only the first N items (stored as incomplete: it cannot unlock the judge)")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--max-tokens", type=int, default=320)
        parser.add_argument("--json", default=None, help="also write the result to this file")

    def handle(self, *args, **opts):
        rubric = rubric_load_file()
        result = judge_calibrate(rubric=rubric, judge_model=opts["judge_model"], path=Path(opts["file"]),
                                 limit=opts["limit"], seed=opts["seed"], max_tokens=opts["max_tokens"])
        t = Thresholds()
        w = self.stdout.write
        w(f"judge {result['judge_model']} on {result['set']} v{result['version']}: {result['items']} items"
          f"{'' if result['complete'] else ' (incomplete)'}; stored as run {result['run_id']}")
        w(f"  {'dimension':18s} {'spearman':>9s} {'exact':>7s} {'n':>5s} {'invalid':>8s}"
          f"   (gate: spearman >= {t.judge_min_spearman}, exact >= {t.judge_min_exact})")
        self._agreement_rows(result["agreement"], indent="  ")
        if len(result.get("agreement_by_origin", {})) > 1:
            for origin, agreement in result["agreement_by_origin"].items():
                w(f"  items from {origin}:")
                self._agreement_rows(agreement, indent="    ")
        if result["trusted"] and result["complete"]:
            w(self.style.SUCCESS("trusted: this judge's scores may decide a verdict"))
        else:
            w(self.style.WARNING("not trusted: comparisons with this judge rest on the deterministic checks alone"))
            for why in result["why_not"]:
                w(f"  {why}")
            if not result["complete"]:
                w("  only a calibration over the whole set counts")
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps(result, indent=2))
            self.stderr.write(f"wrote {opts['json']}")

    def _agreement_rows(self, agreement: dict, *, indent: str) -> None:
        for dim, a in agreement.items():
            rho = "n/a" if a["spearman"] is None else f"{a['spearman']:.3f}"
            exact = "n/a" if a["exact"] is None else f"{a['exact']:.3f}"
            name = f"{indent}{dim}"
            self.stdout.write(f"{name:20s} {rho:>9s} {exact:>7s} {a['n']:>5d} {a['invalid']:>8d}")
