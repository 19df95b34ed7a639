"""Evaluation harness benchmark: wall time of a run over the shipped set (or a --quick subset)
through the real coaching engine with the embedded model, judge included, and model calls per
transcript (coach calls counted by the model layer's observers, judge calls separately).

Uses whatever database the environment points at; rows it creates are labelled "bench"."""

from __future__ import annotations

QUICK_LIMIT = 3


def run(quick: bool) -> list[dict]:
    from django.core.management import call_command

    from evaluation.models import EvalSet
    from evaluation.services.runs import run_config, run_create, run_execute
    from evaluation.services.sets import eval_set_load_file, rubric_load_file

    call_command("migrate", verbosity=0)
    rubric = rubric_load_file()
    eval_set = EvalSet.objects.filter(name="core").order_by("-version").first() or eval_set_load_file()
    limit = QUICK_LIMIT if quick else None
    config = run_config(limit=limit)
    run_obj = run_execute(run=run_create(eval_set=eval_set, config=config, rubric=rubric, label="bench"))
    s = run_obj.summary
    transcripts = max(s.get("transcripts", 0), 1)
    replies = max(s.get("replies", 0), 1)
    scope = f"{s.get('transcripts')} transcripts / {s.get('replies')} replies, coach {config['model']}, " \
            f"judge {config['judge_model']} ×{config['repeats']}"
    name = "bench_eval"
    return [
        {"bench": name, "metric": "run wall time" + (" (quick subset)" if quick else " (full set)"),
         "value": run_obj.wall_time_s, "unit": "s", "note": scope},
        {"bench": name, "metric": "replay time per transcript", "value": run_obj.replay_time_s / transcripts,
         "unit": "s", "note": "coaching engine turns"},
        {"bench": name, "metric": "judge time per reply", "value": run_obj.judge_time_s / replies, "unit": "s",
         "note": "5 dimensions in one JSON-schema call"},
        {"bench": name, "metric": "coach model calls per transcript", "value": run_obj.model_calls / transcripts,
         "unit": "calls", "note": "incl. guard regenerations"},
        {"bench": name, "metric": "judge calls per transcript", "value": run_obj.judge_calls / transcripts,
         "unit": "calls", "note": "incl. retries of invalid output"},
        {"bench": name, "metric": "judge invalid share",
         "value": s.get("judge_invalid", 0) / max(s.get("judge_scores", 1), 1), "unit": "", "note": "after one retry"},
    ]
