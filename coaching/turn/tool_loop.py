"""The optional read-only tool loop (settings.BLOOM_COACH_TOOL_LOOP): before answering, the
model may consult READ tools; actions are never offered to it (code takes them)."""

from __future__ import annotations

import json
import time

from coaching.turn.model import turn_context
from coaching.turn.state import Run, add_ms
from coaching.turn.tools import READ_TOOLS, SPECS, ToolBox
from core.llm import LLMInvalidOutput, chat

MAX_TOOL_ITERATIONS = 3
TOOL_TOKEN_BUDGET = 600  # output tokens across the tool loop; past it, go straight to the answer


def tool_loop(run: Run, messages: list[dict], toolbox: ToolBox) -> tuple[list[dict], str | None]:
    """Bounded ReAct loop over READ tools. Returns (messages with tool results, answer if the model
    answered directly). Tool errors go back to the model as tool results; invalid model output
    ends the loop (the caller then asks for a plain answer — a final answer is guaranteed)."""
    specs = [SPECS[name] for name in READ_TOOLS]
    used_tokens = 0
    for _ in range(MAX_TOOL_ITERATIONS):
        start = time.perf_counter()
        with turn_context(run):
            run.iteration += 1
            run.model_calls += 1
            try:
                result = chat(messages, tools=specs, options={"max_tokens": 160, "temperature": 0.2, "seed": 7},
                              model=run.model)
            except LLMInvalidOutput as exc:
                run.guard_event("tool_output", str(exc)[:200], "ended tool loop")
                return messages, None
            finally:
                add_ms(run, "model", start)
        used_tokens += result.usage.output_tokens or 0
        if not result.tool_calls:
            return messages, (result.text or None)
        messages = [*messages, {"role": "assistant", "content": "",
                                "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in result.tool_calls]}]
        start = time.perf_counter()
        for call in result.tool_calls:
            out = toolbox.call(call.name, call.arguments, by="model")
            messages.append({"role": "tool", "name": call.name, "content": _json(out)})
        add_ms(run, "tools", start)
        if used_tokens >= TOOL_TOKEN_BUDGET:
            run.guard_event("tool_budget", f"{used_tokens} output tokens", "stopped tool loop")
            break
    else:
        run.guard_event("tool_iterations", f"{MAX_TOOL_ITERATIONS} iterations", "stopped tool loop")
    return messages, None


def _json(value) -> str:
    return json.dumps(value, default=str)[:1500]
