"""Two per-request costs of the API, each against what it replaced, in one run:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom CELERY_BROKER_URL=redis://127.0.0.1:6379/12 \
        .venv/bin/python bench/run.py api_overhead

- **The throttle** (core.throttling): µs per request of DRF's sliding log (`SimpleRateThrottle`)
  and of Bloom's sliding-window counter, on the in-process cache and on Redis, at the default rate
  (600/min) and at the load bench's raised rate (1,000,000/min) once 3,000 requests are in the
  window; and how many requests of 8 concurrent clients pass a budget of 120 on a shared Redis
  counter (the budget is the right answer).
- **The search's query validation** (memory.api.views): µs to validate the parameters of a search
  without filters with the filtered form's serializer (14 fields) and with the search's own (3).

Medians of repeated timings; the machine's speed moves between runs, so read the ratios."""

from __future__ import annotations

import statistics
import threading
import time
import uuid

from django.conf import settings
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from rest_framework.throttling import SimpleRateThrottle

from core.throttling import SlidingWindowThrottle

CONCURRENT_CLIENTS = 8


def _throttle(base, rate: str, backend):
    key = f"bench_throttle_{uuid.uuid4().hex}"

    class Fixed(base):
        cache = backend

        def get_rate(self):
            return rate

        def get_cache_key(self, request, view):
            return key

    return Fixed


def _us_per_request(cls, *, prefill: int, n: int) -> float:
    for _ in range(prefill):
        cls().allow_request(None, None)
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            cls().allow_request(None, None)
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def _passed_concurrently(cls, per_client: int) -> int:
    passed: list[int] = []
    start = threading.Barrier(CONCURRENT_CLIENTS)

    def client() -> None:
        start.wait()
        passed.append(sum(cls().allow_request(None, None) for _ in range(per_client)))

    threads = [threading.Thread(target=client) for _ in range(CONCURRENT_CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(passed)


def _validation_us(serializer_class, params: dict, n: int) -> float:
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            s = serializer_class(data=params)
            s.is_valid(raise_exception=True)
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def run(quick: bool) -> list[dict]:
    rows: list[dict] = []
    backends = {"in-process cache": LocMemCache(f"bench-{uuid.uuid4().hex}", {})}
    if settings.CELERY_BROKER_URL.startswith("redis://"):
        # Keys of their own (a random name each), which expire within two hours: nothing else in
        # that Redis database is touched.
        backends["Redis"] = RedisCache(settings.CELERY_BROKER_URL, {})
    n = 300 if quick else 2_000
    for backend_name, backend in backends.items():
        for rate, prefill in (("600/min", 0), ("1000000/min", 3_000)):
            for label, base in (("DRF sliding log", SimpleRateThrottle), ("sliding-window counter",
                                                                          SlidingWindowThrottle)):
                us = _us_per_request(_throttle(base, rate, backend), prefill=prefill, n=n)
                rows.append({"bench": "api.throttle", "metric": f"{label}, {backend_name}, {rate}",
                             "value": us, "unit": "µs/request",
                             "note": f"{prefill:,} requests in the window first" if prefill else
                                     "a window filling from empty (at most 600 in it)"})
        for label, base in (("DRF sliding log", SimpleRateThrottle), ("sliding-window counter",
                                                                      SlidingWindowThrottle)):
            passed = _passed_concurrently(_throttle(base, "120/hour", backend), per_client=40)
            rows.append({"bench": "api.throttle", "metric": f"{label}, {backend_name}: passed of a budget of 120",
                         "value": passed, "unit": "requests",
                         "note": f"{CONCURRENT_CLIENTS} threads x 40 requests at once, one shared counter"})
    from memory.api.serializers import SearchInputSerializer, SearchQuerySerializer

    params = {"q": "What did Gina say about her store?", "limit": "10", "touch": "false"}
    m = 500 if quick else 3_000
    for label, cls in (("the filtered form (14 fields)", SearchQuerySerializer),
                       ("the search's own (3 fields)", SearchInputSerializer)):
        rows.append({"bench": "api.search_params", "metric": f"validate q, limit, touch with {label}",
                     "value": _validation_us(cls, params, m), "unit": "µs/request"})
    return rows
