"""The two instruction-tuned chat models through Bloom's path (the `openai:` provider over HTTP to
the embedded model server), in one run: load time and decode speed of the 0.5B and the 1.5B.

- load: the server keeps every model it has loaded (core.llm.model_server); a model that is not
  the server's default loads on its first request. Two server starts, each with the other model
  as default: load = that first request's time to first token − the same model's warm time to
  first token on a prompt of the same length. Server start to ready (default model loaded, the
  Python imports included) is shown too.
- decode: alternating rounds on the second server (both models resident), tokens after the first
  / time after the first, and time to first token; resident memory of the server with both.

    python bench/run.py chat_models [--quick]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

SMALL, LARGE = "qwen2.5-coder-0.5b-instruct-q4", "qwen2.5-coder-1.5b-instruct-q4"
PROMPTS = ["Give me one tip for learning vocabulary.", "How do I stay motivated when studying alone?",
           "What is a good way to review notes?", "Suggest a short warm-up before practising piano."]
MAX_TOKENS = 64
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_model_runtime import _bloom, _rss_mb  # noqa: E402 - the same measurement as the runtime bench


def _stream(model: str, prompt: str) -> tuple[float, float, int]:
    return _bloom(model, prompt, MAX_TOKENS)


def _server(default: str, log_dir: Path):
    from bloom.tests.reliability import procs

    port = procs.free_port()
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "BLOOM_LLM": f"openai:{default}",
           "LOG_LEVEL": "WARNING"}
    started = time.perf_counter()
    server = procs.model_server(env, port, log_dir, name=f"model-{default}")
    return server, env["OPENAI_BASE_URL"], time.perf_counter() - started


def run(quick: bool) -> list[dict]:
    from django.conf import settings
    from django.core.management import call_command
    from django.test import override_settings

    from core.llm import assets

    for name in (SMALL, LARGE):
        if not assets.chat_model_path(name).is_file():
            raise RuntimeError(f"{name} is not in the model cache: run `manage.py bloom_models`")
    call_command("migrate", verbosity=0, interactive=False)  # telemetry rows of the calls
    log_dir = Path(tempfile.mkdtemp(prefix="bench-chat-models-"))
    rounds = 1 if quick else 3
    load: dict[str, float] = {}
    start: dict[str, float] = {}
    warm: dict[str, list[tuple[float, float, int]]] = {SMALL: [], LARGE: []}
    rss = 0.0
    # Server 1 starts on the 0.5B and loads the 1.5B on demand; server 2 the other way round, and
    # server 2 (both resident after its first requests) also gives the decode rounds.
    for default, other in ((SMALL, LARGE), (LARGE, SMALL)):
        server, url, ready_s = _server(default, log_dir)
        start[default] = ready_s
        try:
            with override_settings(OPENAI_BASE_URL=url, BLOOM_LLM_RETRIES=0):
                _stream(default, "hi")  # the default's first generation (its warm-up, not a load)
                cold = _stream(other, PROMPTS[0])[0]
                warm_ttft = statistics.median(_stream(other, PROMPTS[0])[0] for _ in range(2))
                load[other] = cold - warm_ttft
                if default == LARGE:
                    for i in range(rounds * 2):
                        prompt = PROMPTS[i % len(PROMPTS)]
                        order = (SMALL, LARGE) if i % 2 == 0 else (LARGE, SMALL)
                        for model in order:
                            warm[model].append(_stream(model, prompt))
                    rss = _rss_mb(server.popen.pid)
        finally:
            server.stop()
    rows: list[dict] = []
    note = (f"{rounds * 2} alternating rounds, {MAX_TOKENS} tokens, {settings.BLOOM_LLM_THREADS} threads, "
            "one model server serving both")
    for model, label in ((SMALL, "0.5B"), (LARGE, "1.5B")):
        size_mb = assets.chat_model_path(model).stat().st_size / 1e6
        rows += [
            {"bench": "chat_models", "metric": f"{label}: load on first request", "value": load[model], "unit": "s",
             "note": f"{size_mb:.0f} MB GGUF; first request TTFT - warm TTFT, file in the page cache"},
            {"bench": "chat_models", "metric": f"{label}: server start to ready as default", "value": start[model],
             "unit": "s", "note": "process start, imports, model load"},
            {"bench": "chat_models", "metric": f"{label}: decode", "unit": "tok/s", "note": note,
             "value": statistics.median(r[1] for r in warm[model])},
            {"bench": "chat_models", "metric": f"{label}: time to first token",
             "value": statistics.median(r[0] for r in warm[model]) * 1000, "unit": "ms",
             "note": "short prompt (chat template + one line)"},
        ]
    rows.append({"bench": "chat_models", "metric": "RSS model server, both resident", "value": rss, "unit": "MB"})
    return rows


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run through bench/run.py")
