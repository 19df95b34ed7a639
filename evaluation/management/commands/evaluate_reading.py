"""How well the reader reads learner messages: the labelled set, each mode side by side in one run.

    python manage.py evaluate_reading                    # rules, model, combined
    python manage.py evaluate_reading --modes rules      # no model needed
    python manage.py evaluate_reading --errors 20        # also list act errors and wrong writes
    python manage.py evaluate_reading --set evaluation/data/reading_v2.json   # another labelled set
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import reading as scoring


class Command(BaseCommand):
    help = "Score the reader on the labelled reading set: act accuracy, slot exact match, wrong writes, time."

    def add_arguments(self, parser):
        parser.add_argument("--modes", default="rules,model,combined")
        parser.add_argument("--model", default=None, help="the reader's model (default BLOOM_READING_LLM / BLOOM_LLM)")
        parser.add_argument("--limit", type=int, default=None)
        parser.add_argument("--errors", type=int, default=0, help="list this many act errors and wrong writes")
        parser.add_argument("--step", default=None, help="only items at this step (goal … done)")
        parser.add_argument("--set", default=str(scoring.SET_PATH), help="the labelled set (JSON, as reading_v1.json)")

    def handle(self, *args, **opts):
        path = Path(opts["set"])
        if not path.is_file():
            raise CommandError(f"no labelled set at {path}")
        items = scoring.load(path)
        if opts["step"]:
            items = [i for i in items if i["context"].get("step") == opts["step"]]
        items = items[:opts["limit"]] if opts["limit"] else items
        server = _model_server() if any(m != "rules" for m in opts["modes"].split(",")) else None
        try:
            scores = [scoring.evaluate(items, mode.strip(), model=opts["model"])
                      for mode in opts["modes"].split(",") if mode.strip()]
        finally:
            if server is not None:
                server.stop()
        header = ("mode", "messages", "act_accuracy", "slot_exact", "slots", "wrong_writes", "wrong_unasked",
                  "wrong_write_rate", "p50_ms", "p95_ms", "model_calls")
        self.stdout.write("  ".join(f"{h:>16}" for h in header))
        for score in scores:
            row = score.row()
            self.stdout.write("  ".join(f"{row[h]:>16.3f}" if isinstance(row[h], float) else f"{row[h]!s:>16}"
                                        for h in header))
        for score in scores:
            per_slot = ", ".join(f"{k} {r}/{t}" for k, (r, t) in sorted(score.slots.items()))
            self.stdout.write(f"{score.mode} per slot: {per_slot}")
            self.stdout.write(f"{score.mode} language: {score.languages_right}/{score.languages_labelled} messages in "
                              f"another language told right; {len(score.english_told_other)}/"
                              f"{score.n - score.languages_labelled} in English told as another")
            if opts["errors"]:
                for error in score.act_errors[:opts["errors"]]:
                    self.stdout.write(f"  act {error}")
                for error in score.wrong_writes[:opts["errors"]]:
                    self.stdout.write(f"  WRONG WRITE {error}")
                for error in score.english_told_other[:opts["errors"]]:
                    self.stdout.write(f"  LANGUAGE {error}")


class _Server:
    def __init__(self, proc):
        self.proc = proc

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _model_server() -> _Server | None:
    """The embedded model server for this run when the configured chat model is served by it and
    none is running (as bench/run.py does)."""
    from django.conf import settings

    from core.env import DEFAULT_MODEL_SERVER_URL

    if settings.BLOOM_LLM.provider != "openai" or settings.OPENAI_BASE_URL != DEFAULT_MODEL_SERVER_URL:
        return None
    port = int(DEFAULT_MODEL_SERVER_URL.rsplit(":", 1)[1].split("/")[0])
    if _answers(port):
        return None
    print(f"# starting the embedded model server on port {port} for this run", file=sys.stderr, flush=True)
    proc = subprocess.Popen([sys.executable, "manage.py", "model_server", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if _answers(port):
            return _Server(proc)
        time.sleep(0.5)
    proc.kill()
    raise CommandError(f"the model server did not start on port {port}: run `python manage.py model_server` "
                       "and try again, or use --modes rules")


def _answers(port: int) -> bool:
    import httpx

    try:
        return httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
