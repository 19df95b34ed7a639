"""Background model calls yield to learners who are waiting.

Memory extraction and summaries run in a Celery worker, but on a small deployment that worker
shares the CPU (llama.cpp in-process) or the model server (Ollama serves one request per model at
a time) with the web process answering a learner. "The reply never waits for extraction" is then
only true if background generation steps aside while a turn is running. So a chat call made under
`call_context(priority="background")`:

- waits before it starts while interactive work is in flight, and
- checks again between generated pieces (every `BLOOM_LLM_YIELD_POLL` seconds); when a turn has
  started it abandons the generation (recorded as a telemetry row with status "preempted"), waits
  until no turn is running, and starts again.

Prompt evaluation cannot be interrupted (llama.cpp evaluates the prompt in one call), so a turn
that arrives during it still shares the CPU for at most that long; the replay benchmark measures
what is left (`bench/bench_memory_replay.py`).

Starvation is bounded: after `BLOOM_LLM_YIELD_MAX_WAIT` seconds of yielding in total, the call runs
to the end regardless. Whether interactive work is in flight is asked of a probe the application
registers (coaching: a learner message pending in the last two minutes); with no probe, or with
`BLOOM_LLM_YIELD=0` (a worker on its own hardware), background calls behave like any other.

Boundary: this is code deciding *when* a background call may use the model; nothing here asks the
model anything."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from core.llm.settings import llm_setting
from core.llm.types import LLMError

logger = logging.getLogger(__name__)

BACKGROUND = "background"
INTERACTIVE = "interactive"

_probe_lock = threading.Lock()
_probe: Callable[[], bool] | None = None


class LLMPreempted(LLMError):
    """A background generation stopped because a learner's turn started; it is restarted later."""

    status = "preempted"
    transient = False


def register_interactive_probe(probe: Callable[[], bool] | None) -> None:
    """`probe()` → True while interactive work (a learner waiting for a reply) is in flight."""
    global _probe
    with _probe_lock:
        _probe = probe


def yielding_enabled() -> bool:
    return _probe is not None and bool(llm_setting("BLOOM_LLM_YIELD", True))


def interactive_busy() -> bool:
    probe = _probe
    if probe is None:
        return False
    try:
        return bool(probe())
    except Exception:  # a broken probe must not stop background work; it only loses the courtesy
        logger.warning("interactive probe failed; background call proceeds", exc_info=True)
        return False


def poll_interval() -> float:
    return float(llm_setting("BLOOM_LLM_YIELD_POLL", 0.1))


def max_wait() -> float:
    return float(llm_setting("BLOOM_LLM_YIELD_MAX_WAIT", 300.0))


class YieldBudget:
    """Time one background call has spent yielding; once spent, the call stops yielding."""

    def __init__(self) -> None:
        self.waited = 0.0
        self._limit = max_wait()
        self._last_check = 0.0

    @property
    def exhausted(self) -> bool:
        return self.waited >= self._limit

    def wait_until_idle(self) -> float:
        """Sleep while interactive work is in flight (bounded by what is left of the budget)."""
        started = time.monotonic()
        step = max(poll_interval(), 0.05)
        while not self.exhausted and interactive_busy():
            time.sleep(step)
            self.waited += step
        return time.monotonic() - started

    def should_stop(self) -> bool:
        """Called between generated pieces: True when a turn started (rate-limited probe)."""
        if self.exhausted:
            return False
        now = time.monotonic()
        if now - self._last_check < poll_interval():
            return False
        self._last_check = now
        return interactive_busy()
