"""The sliding-window throttle (core.throttling): exact budgets, the previous window's weight,
Retry-After that is neither early nor late, refused requests not counted, constant-size state, and
no count lost when many requests share a Redis counter at once. The clock is a plain variable the
tests move; the caches are Django's real ones (in-process, and Redis for the shared counter).
The API-level behaviour (429, error shape, one budget per client across token rotation) is
tested in bloom/tests/reliability/test_access.py."""

from __future__ import annotations

import threading
import uuid

import pytest
from django.conf import settings
from django.core.cache import cache
from django.core.cache.backends.redis import RedisCache

from core.throttling import SlidingWindowThrottle


def throttle_class(rate: str, clock: list[float] | None = None, backend=None):
    key = f"throttle_test_{uuid.uuid4().hex}"

    class Fixed(SlidingWindowThrottle):
        def get_rate(self):
            return rate

        def get_cache_key(self, request, view):
            return key

    if clock is not None:
        Fixed.timer = lambda self: clock[0]
    if backend is not None:
        Fixed.cache = backend
    return Fixed


def allowed(cls, n: int) -> int:
    return sum(cls().allow_request(None, None) for _ in range(n))


def test_the_budget_is_exact_within_a_window():
    clock = [600.0]  # the start of a window (60-second windows: 600 / 60 = 10)
    cls = throttle_class("5/min", clock)
    assert allowed(cls, 5) == 5
    assert allowed(cls, 3) == 0
    clock[0] += 30  # half of the same window later: still full
    assert allowed(cls, 1) == 0


def test_refused_requests_do_not_use_the_budget():
    """A client hammering while throttled gets its budget back on time, not later."""
    clock = [600.0]
    cls = throttle_class("4/min", clock)
    assert allowed(cls, 4) == 4
    assert allowed(cls, 50) == 0
    clock[0] = 660.0 + 60.0  # two windows on: nothing of the first window is left in the estimate
    assert allowed(cls, 4) == 4


def test_the_previous_window_counts_by_the_share_still_inside_the_sliding_window():
    clock = [659.0]  # the last second of window 10
    cls = throttle_class("10/min", clock)
    assert allowed(cls, 10) == 10
    clock[0] = 690.0  # half-way through window 11: 10 x 0.5 = 5 of the previous window still count
    assert allowed(cls, 10) == 5
    clock[0] = 714.0  # 0.9 of window 11 gone: 10 x 0.1 + 5 = 6 counted, 4 more fit
    assert allowed(cls, 10) == 4


@pytest.mark.parametrize("burst_at", [600.0, 631.5, 659.9])
def test_retry_after_is_neither_early_nor_late(burst_at):
    clock = [burst_at]
    cls = throttle_class("6/min", clock)
    assert allowed(cls, 6) == 6
    refused = cls()
    assert refused.allow_request(None, None) is False
    wait = refused.wait()
    assert wait is not None and wait > 0
    clock[0] = burst_at + wait - 0.01
    assert allowed(cls, 1) == 0, "Retry-After was too early"
    clock[0] = burst_at + wait + 0.01
    assert allowed(cls, 1) == 1, "Retry-After was later than needed"


def test_the_state_is_two_integers_whatever_the_rate():
    """DRF's sliding log stored one timestamp per request (thousands at a high rate), rewritten on
    every request; here a window is one integer counter."""
    clock = [1200.0]
    cls = throttle_class("100000/min", clock)
    assert allowed(cls, 2_000) == 2_000
    key = cls().get_cache_key(None, None)
    assert cache.get(f"{key}:20") == 2_000
    assert cache.get(f"{key}:19") is None
    clock[0] = 1290.0  # half-way through the next window: the last one is read, not rewritten
    assert allowed(cls, 3) == 3
    assert (cache.get(f"{key}:20"), cache.get(f"{key}:21")) == (2_000, 3)


def test_no_rate_means_no_throttle():
    assert allowed(throttle_class(None), 100) == 100


def test_no_count_is_lost_when_requests_share_a_redis_counter_at_once():
    """Eight threads, each with its own throttle, one Redis counter: exactly the budget passes.
    (DRF's log, read and written back whole, let through more: concurrent writers overwrote each
    other's timestamps.)"""
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.skip("needs the Redis the integration suite runs on")
    backend = RedisCache(settings.CELERY_BROKER_URL, {})
    cls = throttle_class("120/hour", [7200.0], backend)  # the window's start: nothing carried over
    passed = []
    start = threading.Barrier(8)

    def client():
        start.wait()
        passed.append(allowed(cls, 40))

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(passed) == 120
    key = cls().get_cache_key(None, None)
    assert backend.get(f"{key}:2") == 120
    backend.delete(f"{key}:2")
