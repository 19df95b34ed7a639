"""Run an evaluation: replay a set through the coaching engine with a configuration, check and
judge every reply, and optionally compare against a baseline run (exit code 2 on a regression)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from evaluation import compare
from evaluation.models import EvalRun, EvalSet
from evaluation.selectors import judge_calibration_for_comparison, run_export, run_find
from evaluation.services.checking import run_recheck
from evaluation.services.comparisons import comparison_create
from evaluation.services.pairwise import pairwise_execute
from evaluation.services.runs import RunHooks, run_config, run_create, run_execute
from evaluation.services.sets import eval_set_add_new_from_file, rubric_load_file

EXIT_REGRESSION = 2


class Command(BaseCommand):
    help = "Replay an eval set, run deterministic checks and the LLM judge; compare with --baseline."

    def add_arguments(self, parser):
        parser.add_argument("--set", default="core", help="eval set name (default: core)")
        parser.add_argument("--set-version", type=int, default=None, help="default: the newest version")
        parser.add_argument("--model", default=None, help="coach model, e.g. llamacpp:gemma3-270m-q4-k-m")
        parser.add_argument("--prompt-version", default=None)
        parser.add_argument("--judge-model", default=None, help="default: BLOOM_JUDGE_LLM (else BLOOM_LLM)")
        parser.add_argument("--repeats", type=int, default=1, help="judge repeats per reply (mean and spread)")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--max-tokens", type=int, default=None, help="coach max tokens (direct engine only)")
        parser.add_argument("--limit", type=int, default=None, help="only the first K transcripts")
        parser.add_argument("--slug", action="append", default=None, help="only these transcripts (repeatable)")
        parser.add_argument("--engine", choices=["coaching", "direct"], default="coaching")
        parser.add_argument("--no-judge", action="store_true", help="deterministic checks only")
        parser.add_argument("--baseline", default=None,
                            help="baseline run to compare with: its id (UUID, as `run <id>` lines show it)")
        parser.add_argument("--pairwise", action="store_true", help="also judge pairwise vs the baseline (both orders)")
        parser.add_argument("--label", default="")
        parser.add_argument("--recheck", default=None,
                            help="re-run the deterministic checks on an existing run (no model calls), then "
                                 "summarise/compare it instead of replaying")
        parser.add_argument("--json", default=None, help="write the run export (and comparison) to this file")
        parser.add_argument("--check-rate-threshold", type=float, default=compare.Thresholds.check_rate_increase)
        parser.add_argument("--dimension-drop-threshold", type=float, default=compare.Thresholds.dimension_mean_drop)

    def handle(self, *args, **opts):
        rubric = rubric_load_file()
        qs = EvalSet.objects.filter(name=opts["set"])
        if opts["set"] == "core" and (added := eval_set_add_new_from_file()):
            self.stdout.write(f"loaded {added} transcript{'s' if added > 1 else ''} new in the shipped set")
        if opts["set_version"] is not None:
            qs = qs.filter(version=opts["set_version"])
        eval_set = qs.order_by("-version").first()
        if eval_set is None:
            raise CommandError(f"no eval set named {opts['set']!r} (load it with `manage.py load_eval_set`)")
        baseline = None
        if opts["baseline"] is not None:
            baseline = run_find(opts["baseline"])
            if baseline is None:
                raise CommandError(f"baseline run {opts['baseline']} does not exist")
            if baseline.eval_set_id != eval_set.pk:
                raise CommandError(f"baseline run {baseline.public_id} used {baseline.eval_set}, not {eval_set}")
        if opts["recheck"] is not None:
            run = run_find(opts["recheck"])
            if run is None:
                raise CommandError(f"run {opts['recheck']} does not exist")
            run = run_recheck(run=run)
            self._print_summary(run)
            return self._finish(run, baseline, opts, run.config)
        config = run_config(model=opts["model"], prompt_version=opts["prompt_version"],
                            judge_model=opts["judge_model"], repeats=opts["repeats"],
                            temperature=opts["temperature"], seed=opts["seed"], max_tokens=opts["max_tokens"],
                            limit=opts["limit"], slugs=opts["slug"], engine=opts["engine"],
                            judge=not opts["no_judge"])
        run = run_create(eval_set=eval_set, config=config, rubric=rubric, label=opts["label"])
        total = eval_set.transcripts.count()
        if opts["limit"]:
            total = min(total, opts["limit"])
        if opts["slug"]:
            total = len(opts["slug"])
        self.stderr.write(f"run {run.public_id}: {eval_set} · coach {config['model']} "
                          f"· prompt {config['prompt_version']} "
                          f"· judge {config['judge_model'] if config['judge'] else 'off'} × {config['repeats']}")
        with tqdm(total=total, unit="transcript", file=sys.stderr, dynamic_ncols=True) as bar:
            def done(transcript):
                bar.set_postfix_str(transcript.slug[:30])
                bar.update(1)

            run = run_execute(run=run, hooks=RunHooks(transcript_done=done))
        self._print_summary(run)
        return self._finish(run, baseline, opts, config)

    def _finish(self, run: EvalRun, baseline: EvalRun | None, opts: dict, config: dict) -> None:
        out = {"run": run_export(run=run)}
        exit_code = 0
        if baseline is not None:
            pairwise = None
            if opts["pairwise"]:
                pairwise = pairwise_execute(baseline=baseline, candidate=run,
                                            config={"judge_model": config["judge_model"], "seed": config["seed"]})
                self.stdout.write(f"pairwise run {pairwise.public_id}: {json.dumps(pairwise.summary)}")
            thresholds = compare.Thresholds(check_rate_increase=opts["check_rate_threshold"],
                                            dimension_mean_drop=opts["dimension_drop_threshold"])
            # Judge scores decide nothing unless this judge passed the calibration gate
            # (`manage.py judge_calibrate`); without it the verdict rests on the checks alone.
            calibration = judge_calibration_for_comparison(baseline=baseline, candidate=run)
            comparison = comparison_create(baseline=baseline, candidate=run, thresholds=thresholds,
                                           pairwise_run=pairwise, judge_calibration=calibration)
            self._print_comparison(comparison)
            out["comparison"] = {"baseline": baseline.public_id, "candidate": run.public_id,
                                 "verdict": comparison.verdict, "reasons": comparison.reasons,
                                 "deltas": comparison.deltas, "thresholds": comparison.thresholds}
            if comparison.verdict == "regression":
                exit_code = EXIT_REGRESSION
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps(out, indent=2, default=str))
            self.stderr.write(f"wrote {opts['json']}")
        if exit_code:
            self.stderr.write(self.style.ERROR(f"REGRESSION vs run {baseline.public_id}"))
            sys.exit(exit_code)

    def _print_summary(self, run: EvalRun) -> None:
        s = run.summary
        w = self.stdout.write
        w(f"run {run.public_id} done in {run.wall_time_s:.1f}s (replay {run.replay_time_s:.1f}s, "
          f"judge {run.judge_time_s:.1f}s);"
          f" {s.get('replies')} replies from {s.get('transcripts')} transcripts; coach calls {run.model_calls}, "
          f"judge calls {run.judge_calls}; engine {','.join(s.get('engine', []))}")
        w("check rates (final reply / raw model output):")
        for name, rate in s.get("check_rates", {}).items():
            w(f"  {name:20s} {rate:5.2f}  raw {s.get('raw_check_rates', {}).get(name, rate):5.2f}")
        w(f"  guard fired {s.get('guard_fired_rate', 0):.2f}   fallback {s.get('fallback_rate', 0):.2f}   "
          f"mean words {s.get('check_means', {}).get('over_length', 0):.1f}")
        lat = s.get("model_turn_latency_s", {})
        if lat.get("n"):
            w(f"  model turns {lat['n']}: whole turn p50 {lat['p50']:.1f}s  p95 {lat['p95']:.1f}s  "
              f"max {lat['max']:.1f}s")
        w("judge (mean ± spread, n valid, invalid):")
        for dim, st in s.get("dimensions", {}).items():
            mean = "—" if st["mean"] is None else f"{st['mean']:.2f}"
            w(f"  {dim:18s} {mean} ± {st['stdev']:.2f}  n={st['n']} invalid={st['invalid']}")
        w(f"judge self-agreement: {s.get('reliability', {}).get('self_agreement')}")
        for note in s.get("notes", []):
            w(f"note: {note}")

    def _print_comparison(self, comparison) -> None:
        w = self.stdout.write
        w(f"comparison: baseline {comparison.baseline.public_id} → candidate {comparison.candidate.public_id}: "
          f"{comparison.verdict.upper()}")
        for name, d in comparison.deltas.get("checks", {}).items():
            w(f"  {name:26s} {d['baseline']:5.2f} → {d['candidate']:5.2f}  ({d['delta']:+.2f})")
        for dim, d in comparison.deltas.get("dimensions", {}).items():
            if d["delta"] is not None:
                w(f"  {dim:26s} {d['baseline']:5.2f} → {d['candidate']:5.2f}  ({d['delta']:+.2f})")
        for reason in comparison.reasons:
            w(f"  REASON: {reason}")
        judge = comparison.deltas.get("judge", {})
        if not judge.get("trusted"):
            w(f"  judge: {judge.get('note', '')} ({'; '.join(judge.get('why_not', []))})")
            for reason in judge.get("ignored_reasons", []):
                w(f"  not counted (judge untrusted): {reason}")
