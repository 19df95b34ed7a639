"""A smoke generation in a child process: load a chat GGUF with the installed llama.cpp and
generate a few tokens. Run by `bloom_models` and `preflight` before anything depends on it.

Why a child: a llama.cpp build that mishandles the CPU does not raise, it kills the process
(SIGSEGV on AMX Xeons with a natively built wheel; SIGILL where the build uses instructions the
CPU lacks). In a child that becomes one line naming the cause and the fix, and the command that
asked stops there, instead of the first learner's message killing the web server.

    python -m core.llm.smoke <path.gguf>    # prints one JSON line; exit 0 when it generated
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REBUILD = "rebuild llama.cpp for this CPU: rm .venv/.installed .venv/llama_cpp_build.txt && make install " \
          "(scripts/install_llama_cpp.sh; see docs/model-runtime.md)"


@dataclass(frozen=True)
class SmokeResult:
    ok: bool
    line: str  # one line for the operator: what happened, and on failure the cause and the fix
    tokens_per_s: float = 0.0


def explain(returncode: int, output: str, *, model: Path, timeout: float, timed_out: bool) -> SmokeResult:
    """Turn a child's end into one line (pure, so every branch is unit-tested)."""
    tail = output.strip().splitlines()[-1][:200] if output.strip() else ""
    if timed_out:
        return SmokeResult(False, f"llama.cpp hung: no tokens from {model.name} within {timeout:.0f}s "
                                  f"(a machine far too busy or a broken build); {REBUILD}")
    if returncode == 0:
        try:
            data = json.loads(output.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return SmokeResult(False, f"llama.cpp smoke generation printed no result: {tail!r}")
        return SmokeResult(True, f"llama.cpp generated {data['tokens']} tokens with {model.name} "
                                 f"({data['tokens_per_s']:.1f} tok/s)", float(data["tokens_per_s"]))
    if returncode < 0:
        sig = -returncode
        try:
            name = signal.Signals(sig).name
        except ValueError:  # a number no signal has
            name = f"signal {sig}"
        if sig == signal.SIGSEGV:
            cause = "llama.cpp crashed (SIGSEGV) on its first generation: the installed build uses CPU " \
                    "code paths this machine mishandles (natively built wheels enable AMX, which crashes)"
        elif sig == signal.SIGILL:
            cause = "llama.cpp hit an illegal instruction: it was built for another CPU"
        elif sig == signal.SIGKILL:
            cause = "llama.cpp was killed (SIGKILL; out of memory?)"
        else:
            cause = f"llama.cpp died with {name}"
        return SmokeResult(False, f"{cause} while generating with {model.name}; {REBUILD}")
    return SmokeResult(False, f"llama.cpp smoke generation failed (exit {returncode}) with {model.name}: {tail}")


def smoke_generation(model: Path, *, timeout: float = 180.0, threads: int | None = None) -> SmokeResult:
    if not model.is_file():
        return SmokeResult(False, f"chat model file {model} is missing: run `python manage.py bloom_models`")
    try:
        done = subprocess.run([sys.executable, "-m", "core.llm.smoke", str(model), str(threads or 0)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return explain(-1, out, model=model, timeout=timeout, timed_out=True)
    return explain(done.returncode, done.stdout + done.stderr if done.returncode else done.stdout,
                   model=model, timeout=timeout, timed_out=False)


def _child(path: str, threads: int) -> None:
    from llama_cpp import Llama

    threads = threads or os.cpu_count() or 2
    llm = Llama(model_path=path, n_ctx=256, n_threads=threads, verbose=False)
    started = time.monotonic()
    out = llm.create_completion("The capital of France is", max_tokens=8, temperature=0.0)
    elapsed = time.monotonic() - started
    tokens = int(out["usage"]["completion_tokens"])
    print(json.dumps({"tokens": tokens, "tokens_per_s": tokens / elapsed if elapsed > 0 else 0.0}))
    llm.close()


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
