"""Per-client API throttling.

One budget per API client (all of a client's tokens share it: rotating a token must not reset
the budget), one per staff user on a session, and one per IP address for anonymous requests.
The rate comes from settings (`BLOOM_THROTTLE_RATE`, e.g. "600/min"). A throttled request gets
429 with `Retry-After` in the project's error shape (DRF raises `Throttled`; the shared
exception handler renders it).

The count is a sliding-window counter (two fixed-window counters, the previous one weighted by
the share of it still inside the window), not DRF's sliding log. DRF's `SimpleRateThrottle`
keeps every request's timestamp in one cache value, read, trimmed, prepended to and written back
whole on every request: its cost grows with the rate (645 µs a request on the in-process cache
with 3,000 requests in the window, `bench/run.py api_overhead`), and requests at once each write
back what they read, so counts are lost (8 clients on one Redis counter: 320 requests passed a
budget of 120). Here a request reads two integers in one round trip and, when it is let through,
increments one atomically: the same cost at any rate, and no count is lost between processes
sharing a Redis cache (a request that finds the budget taken by others between its read and its
increment gives its count back). A refused request writes nothing, so it does not use the
budget. The estimate assumes the previous window's requests were spread evenly over it, the
usual trade for O(1) counting.

Counters live in Django's cache: the in-process default counts per web process, so a deployment
with several processes sets `BLOOM_CACHE_URL` to a Redis URL to share the counters."""

from __future__ import annotations

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle


class SlidingWindowThrottle(SimpleRateThrottle):
    """DRF's rate parsing, keys and cache, with the count kept as a sliding-window counter."""

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        now = self.timer()
        window = int(now // self.duration)
        current, previous = f"{key}:{window}", f"{key}:{window - 1}"
        counts = self.cache.get_many([previous, current])  # one round trip
        earlier = counts.get(previous, 0)
        carried = earlier * (1 - (now / self.duration - window))  # the previous window's share still inside
        if carried + counts.get(current, 0) + 1 > self.num_requests:
            return self._refuse(now=now, window=window, earlier=earlier, counted=counts.get(current, 0))
        count = self._incr(current, exists=current in counts)
        if carried + count > self.num_requests:  # others were counted between the read and the increment
            self.cache.decr(current)
            return self._refuse(now=now, window=window, earlier=earlier, counted=count - 1)
        return True

    def _incr(self, key: str, *, exists: bool) -> int:
        if exists:
            try:
                return self.cache.incr(key)
            except ValueError:  # it expired since it was read
                pass
        # The window's first request. Kept for two windows: the next window reads it as its previous.
        if self.cache.add(key, 1, timeout=2 * self.duration):
            return 1
        return self.cache.incr(key)  # another request created it first

    def _refuse(self, *, now: float, window: int, earlier: int, counted: int) -> bool:
        """A refused request is not counted: its budget comes back on time however often it retries."""
        self._retry_after = self._wait(now=now, window=window, earlier=earlier, counted=counted)
        return False

    def _wait(self, *, now: float, window: int, earlier: int, counted: int) -> float:
        """Seconds until one more request fits, if no other arrives meanwhile."""
        room = self.num_requests - 1 - counted  # requests of this window that could still come
        if room >= 0:
            # The previous window's weight must fall to `room`: elapsed >= 1 - room / earlier.
            return max(0.0, (window + 1 - room / earlier) * self.duration - now)
        # This window alone is over the budget: in the next one its count is the weighted part,
        # which must fall to num_requests - 1.
        share = max(0.0, 1 - (self.num_requests - 1) / counted)
        return (window + 1 + share) * self.duration - now

    def wait(self) -> float | None:
        return getattr(self, "_retry_after", None)


class ClientRateThrottle(SlidingWindowThrottle):
    scope = "client"

    def get_rate(self):
        # Read per request (DRF's base class freezes the rates at import time), so a changed setting
        # (override_settings in tests, a reloaded configuration) takes effect.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        from core.identity.models import ApiClient  # lazy: DRF imports throttles while settings load

        user = request.user
        if isinstance(user, ApiClient):
            ident = f"client:{user.pk}"
        elif getattr(user, "is_authenticated", False):
            ident = f"user:{user.pk}"
        else:
            ident = f"ip:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
