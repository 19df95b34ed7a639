"""The plain-text reply grammar (core/llm/grammars.py), on and off, in one run: Bloom's provider
over HTTP to the embedded model server, the coach's system prompt, prompts that bait a markdown
list and ordinary coaching messages, measured alternately so that load from elsewhere hits both
arms alike. Per arm: decode tokens/s, time to first token, and the share of replies with a line
break or a markdown mark (what the guard's flattening acts on).

    python bench/run.py plain_grammar [--quick]
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROMPTS = ["give me a complete guide to learning freestyle swimming",
           "list all the tips you have for practising guitar", "I skipped my session yesterday, I was too tired",
           "how do I stay motivated when I study alone?", "tell me everything I should know about sourdough",
           "what should I focus on this week?"]
MAX_TOKENS = 120  # the coach's reply budget (coaching.turn.state.REPLY_MAX_TOKENS)
_MARKDOWN = re.compile(r"(?m)\n|\*\*|^\s*(?:[-*•#]|\d+[.)])\s")


def _one(model: str, prompt: str, plain: bool) -> tuple[float, float, str]:
    from coaching.turn import prompts
    from core import llm

    system = prompts.system_prompt("coach")
    started, first, parts = time.perf_counter(), None, []
    stream = llm.chat([{"role": "system", "content": system}, {"role": "user", "content": prompt}], stream=True,
                      model=f"openai:{model}",
                      options={"max_tokens": MAX_TOKENS, "temperature": 0.3, "seed": 7, "timeout": 900,
                               "stop": prompts.STOP, "plain_text": plain})
    for piece in stream:
        parts.append(piece)
        first = first or time.perf_counter()
    end = time.perf_counter()
    n = stream.result.usage.output_tokens if stream.result and stream.result.usage else len(parts)
    return first - started, (n - 1) / (end - first) if n > 1 and end > first else 0.0, "".join(parts)


def run(quick: bool) -> list[dict]:
    from django.core.management import call_command
    from django.test import override_settings

    from bloom.tests.reliability import procs
    from core.llm import assets

    call_command("migrate", verbosity=0, interactive=False)  # every model call is a telemetry row
    model = assets.DEFAULT_CHAT_MODEL
    rounds = len(PROMPTS) if quick else 2 * len(PROMPTS)
    log_dir = Path(tempfile.mkdtemp(prefix="bench-grammar-"))
    port = procs.free_port()
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "LOG_LEVEL": "WARNING"}
    server = procs.model_server(env, port, log_dir)
    load_before = os.getloadavg()[0]
    try:
        with override_settings(OPENAI_BASE_URL=env["OPENAI_BASE_URL"], BLOOM_LLM_RETRIES=0):
            _one(model, "hi", False), _one(model, "hi", True)  # warm both
            arms: dict[bool, list[tuple[float, float, str]]] = {False: [], True: []}
            for i in range(rounds):
                prompt = PROMPTS[i % len(PROMPTS)]
                for plain in ((False, True) if i % 2 == 0 else (True, False)):
                    arms[plain].append(_one(model, prompt, plain))
    finally:
        server.stop()
    note = (f"{rounds} alternating rounds, {MAX_TOKENS} max tokens, coach prompt; load average "
            f"{load_before:.1f} → {os.getloadavg()[0]:.1f}")
    rows = []
    for plain, label in ((False, "grammar off"), (True, "grammar on")):
        results = arms[plain]
        marked = sum(1 for *_, text in results if _MARKDOWN.search(text))
        rows += [
            {"bench": "plain_grammar", "metric": f"decode, {label}", "value": statistics.median(r[1] for r in results),
             "unit": "tok/s", "note": note},
            {"bench": "plain_grammar", "metric": f"TTFT, {label}",
             "value": statistics.median(r[0] for r in results) * 1000, "unit": "ms"},
            {"bench": "plain_grammar", "metric": f"replies with a line break or markdown, {label}",
             "value": f"{marked}/{len(results)}", "unit": ""},
        ]
    ratio = statistics.median(r[1] for r in arms[True]) / max(statistics.median(r[1] for r in arms[False]), 1e-9)
    rows.append({"bench": "plain_grammar", "metric": "decode ratio on/off", "value": ratio, "unit": "x"})
    for *_, text in arms[True][:len(PROMPTS)]:
        rows.append({"bench": "plain_grammar", "metric": "sample, grammar on", "value": "", "unit": "",
                     "note": repr(text[:110])})
    return rows


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run through bench/run.py")
