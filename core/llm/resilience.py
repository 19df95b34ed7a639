"""Retries and a circuit breaker, decided in code (never by a model).

- Only `transient` errors are retried, `BLOOM_LLM_RETRIES` times, with exponential backoff
  (`BLOOM_LLM_BACKOFF` · 2^attempt, plus a little jitter, capped at `BLOOM_LLM_BACKOFF_MAX`).
- One breaker per provider: after `BLOOM_LLM_BREAKER_THRESHOLD` consecutive transient failures
  it opens for `BLOOM_LLM_BREAKER_COOLDOWN` seconds; while open, calls fail at once with
  `LLMOverloaded(retry_after=…)` instead of piling onto a sick backend. After the cool-down one
  trial call is let through (half-open); its outcome closes or re-opens the breaker."""

from __future__ import annotations

import random
import threading
import time

from core.llm.settings import llm_setting
from core.llm.types import LLMOverloaded


class CircuitBreaker:
    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self.failures = 0
        self.opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def threshold(self) -> int:
        return int(llm_setting("BLOOM_LLM_BREAKER_THRESHOLD", 5))

    @property
    def cooldown(self) -> float:
        return float(llm_setting("BLOOM_LLM_BREAKER_COOLDOWN", 30.0))

    def state(self) -> str:
        with self._lock:
            if self.opened_at is None:
                return "closed"
            return "open" if time.monotonic() - self.opened_at < self.cooldown else "half_open"

    def before_call(self) -> None:
        with self._lock:
            if self.opened_at is None:
                return
            remaining = self.cooldown - (time.monotonic() - self.opened_at)
            if remaining > 0 or self._trial_in_flight:
                raise LLMOverloaded(
                    f"circuit breaker for {self.name} is open after {self.failures} consecutive failures; "
                    f"retry in {max(remaining, 0):.1f}s", retry_after=max(remaining, 0.0) or self.cooldown)
            self._trial_in_flight = True  # half-open: let exactly one call probe the backend

    def success(self) -> None:
        with self._lock:
            self.failures = 0
            self.opened_at = None
            self._trial_in_flight = False

    def failure(self) -> None:
        with self._lock:
            self.failures += 1
            self._trial_in_flight = False
            if self.failures >= self.threshold:
                self.opened_at = time.monotonic()

    def reset(self) -> None:
        self.success()


_breakers: dict[str, CircuitBreaker] = {}
_breakers_lock = threading.Lock()


def breaker(name: str) -> CircuitBreaker:
    with _breakers_lock:
        if name not in _breakers:
            _breakers[name] = CircuitBreaker(name)
        return _breakers[name]


def reset_breakers() -> None:
    with _breakers_lock:
        for b in _breakers.values():
            b.reset()


def backoff_delay(attempt: int, retry_after: float | None = None) -> float:
    base = float(llm_setting("BLOOM_LLM_BACKOFF", 0.5))
    cap = float(llm_setting("BLOOM_LLM_BACKOFF_MAX", 8.0))
    delay = base * (2 ** attempt) * (1 + random.random() * 0.1)
    if retry_after:
        delay = max(delay, retry_after)
    return min(delay, cap)
