"""The model runtime, in one run: Bloom's path to the model (the `openai:` provider over HTTP to
the embedded model server, a process of its own) against raw llama.cpp in this process, on the
same GGUF, the same prompts and the same thread count, measured alternately so that load from
elsewhere on the machine hits both arms alike; the ratios are what to read.

- decode tokens/s (tokens after the first / time after the first) and time to first token;
- cancel-to-free: a streamed generation closed after a few tokens, then a new request: how much
  longer than a fresh request's time to first token it waited, in tokens of decode time
  (the server stops at its next token when the client disconnects);
- resident memory of the model process and of a web process that has served an API call (which
  holds no chat model weights: llama.cpp is not even loaded there).

    python bench/run.py model_runtime [--quick]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROMPTS = ["Give me one tip for learning vocabulary.", "How do I stay motivated when studying alone?",
           "What is a good way to review notes?", "Suggest a short warm-up before practising piano."]
MAX_TOKENS = 48


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _loads_llama(pid: int) -> bool:
    return "libllama" in Path(f"/proc/{pid}/maps").read_text()


def _raw(llm, prompt: str) -> tuple[float, float, int]:
    started, first, n = time.perf_counter(), None, 0
    for chunk in llm.create_chat_completion(messages=[{"role": "user", "content": prompt}], stream=True,
                                            max_tokens=MAX_TOKENS, temperature=0.0, seed=7):
        if chunk["choices"][0].get("delta", {}).get("content"):
            n += 1
            first = first or time.perf_counter()
    end = time.perf_counter()
    return first - started, (n - 1) / (end - first) if n > 1 else 0.0, n


def _bloom(model: str, prompt: str, max_tokens: int = MAX_TOKENS) -> tuple[float, float, int]:
    """(time to first token, decode tok/s, tokens) of one streamed generation through Bloom's path."""
    from core import llm

    started, first, n = time.perf_counter(), None, 0
    stream = llm.chat([{"role": "user", "content": prompt}], stream=True, model=f"openai:{model}",
                      options={"max_tokens": max_tokens, "temperature": 0.0, "seed": 7, "timeout": 900})
    for _ in stream:
        n += 1
        first = first or time.perf_counter()
    end = time.perf_counter()
    return first - started, (n - 1) / (end - first) if n > 1 else 0.0, n


def run(quick: bool) -> list[dict]:
    from django.conf import settings
    from django.core.management import call_command
    from django.test import override_settings
    from llama_cpp import Llama

    from bloom.tests.reliability import procs
    from core.llm import assets

    call_command("migrate", verbosity=0, interactive=False)  # telemetry rows of the Bloom arm
    model = assets.DEFAULT_CHAT_MODEL
    path = assets.chat_model_path(model)
    threads = settings.BLOOM_LLM_THREADS
    rounds = 2 if quick else 6
    log_dir = Path(tempfile.mkdtemp(prefix="bench-runtime-"))
    port = procs.free_port()
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "LOG_LEVEL": "WARNING"}
    server = procs.model_server(env, port, log_dir)
    web = None
    rows: list[dict] = []
    try:
        raw = Llama(model_path=str(path), n_ctx=settings.BLOOM_LLM_CONTEXT, n_threads=threads,
                    n_threads_batch=threads, verbose=False)
        with override_settings(OPENAI_BASE_URL=env["OPENAI_BASE_URL"], BLOOM_LLM_RETRIES=0):
            _raw(raw, "hi"), _bloom(model, "hi")  # warm both (first-call costs are not the runtime's)
            arms: dict[str, list[tuple[float, float, int]]] = {"raw": [], "bloom": []}
            for i in range(rounds):
                prompt = PROMPTS[i % len(PROMPTS)]
                order = ("raw", "bloom") if i % 2 == 0 else ("bloom", "raw")
                for arm in order:
                    arms[arm].append(_raw(raw, prompt) if arm == "raw" else _bloom(model, prompt))
            raw.close()

            # cancel-to-free: a long generation closed after 5 tokens, then a request; against the
            # same long prompt ended naturally at 5 tokens (max_tokens), then the same request. The
            # model's cache holds the same tokens in both arms, so the difference is what the
            # cancelled generation went on costing after the client left.
            from core import llm

            story = [{"role": "user", "content": "Write a very long story about a dragon."}]
            waits, fresh = [], []
            for i in range(2 if quick else 4):
                probe = PROMPTS[(i + 1) % len(PROMPTS)]
                stream = llm.chat(story, stream=True, model=f"openai:{model}",
                                  options={"max_tokens": 400, "temperature": 0.0, "seed": 7, "timeout": 900})
                pieces = iter(stream)
                for _ in range(5):
                    next(pieces)
                stream.close()
                waits.append(_bloom(model, probe)[0])
                llm.chat(story, model=f"openai:{model}", options={"max_tokens": 5, "temperature": 0.0, "seed": 7})
                fresh.append(_bloom(model, probe)[0])
        decode_raw = statistics.median(r[1] for r in arms["raw"])
        decode_bloom = statistics.median(r[1] for r in arms["bloom"])
        ttft_raw = statistics.median(r[0] for r in arms["raw"])
        ttft_bloom = statistics.median(r[0] for r in arms["bloom"])
        extra_s = statistics.median(waits) - statistics.median(fresh)
        note = f"{rounds} alternating rounds, {MAX_TOKENS} tokens, {threads} threads, {path.name}"
        rows += [
            {"bench": "model_runtime", "metric": "decode raw llama.cpp", "value": decode_raw, "unit": "tok/s",
             "note": note},
            {"bench": "model_runtime", "metric": "decode via Bloom provider", "value": decode_bloom, "unit": "tok/s",
             "note": "openai: provider -> HTTP -> embedded model server"},
            {"bench": "model_runtime", "metric": "decode ratio bloom/raw", "value": decode_bloom / decode_raw,
             "unit": "x", "note": "goal >= 0.9"},
            {"bench": "model_runtime", "metric": "TTFT raw llama.cpp", "value": ttft_raw * 1000, "unit": "ms"},
            {"bench": "model_runtime", "metric": "TTFT via Bloom provider", "value": ttft_bloom * 1000, "unit": "ms"},
            {"bench": "model_runtime", "metric": "TTFT ratio raw/bloom", "value": ttft_raw / ttft_bloom, "unit": "x",
             "note": "goal >= 0.9 (1.0 = no overhead)"},
            {"bench": "model_runtime", "metric": "cancel-to-free extra wait", "value": extra_s * decode_bloom,
             "unit": "tokens", "note": f"{extra_s * 1000:.0f} ms more than after a generation that ended by itself "
                     "(goal <= 1 token)"},
            {"bench": "model_runtime", "metric": "RSS model server", "value": _rss_mb(server.popen.pid), "unit": "MB"},
        ]
        web_port = procs.free_port()
        web = procs.web(env, web_port, log_dir)
        import httpx

        httpx.get(f"http://127.0.0.1:{web_port}/api/schema/", timeout=60)
        rows.append({"bench": "model_runtime", "metric": "RSS web process", "value": _rss_mb(web.popen.pid),
                     "unit": "MB", "note": "after serving a request; llama.cpp loaded there: "
                                           f"{'yes' if _loads_llama(web.popen.pid) else 'no'}"})
    finally:
        if web is not None:
            web.stop()
        server.stop()
    return rows


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run through bench/run.py")
