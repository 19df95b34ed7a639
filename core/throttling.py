"""Per-client API throttling.

One budget per API client (all of a client's tokens share it: rotating a token must not reset
the budget), one per staff user on a session, and one per IP address for anonymous requests.
The rate comes from settings (`BLOOM_THROTTLE_RATE`, e.g. "600/min"). A throttled request gets
429 with `Retry-After` in the project's error shape (DRF raises `Throttled`; the shared
exception handler renders it).

The count is a sliding-window counter (two fixed-window counters, the previous one weighted by
the share of it still inside the window), not DRF's sliding log. DRF's `SimpleRateThrottle`
keeps every request's timestamp in one cache value, read, trimmed, prepended to and written back
whole on every request: its cost grows with the rate (600 floats pickled per request at
600/min; at the load bench's raised rate, thousands, 5 % of a web worker's CPU by py-spy), and
two requests at once both write back what they read, so one of them is not counted. Here a
request is one atomic `incr` of an integer and one `get`: the same cost at any rate, and no count
is lost between processes sharing a Redis cache. The estimate assumes the previous window's
requests were spread evenly over it, the usual trade for O(1) counting; a refused request does
not use the budget.

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
        current = f"{key}:{window}"
        count = self._incr(current)
        earlier = self.cache.get(f"{key}:{window - 1}", 0)
        elapsed = now / self.duration - window  # share of the current window gone by, 0..1
        if earlier * (1 - elapsed) + count <= self.num_requests:
            return True
        self.cache.decr(current)  # refused: it does not count against the budget
        self._retry_after = self._wait(now=now, window=window, earlier=earlier, counted=count - 1)
        return False

    def _incr(self, key: str) -> int:
        try:
            return self.cache.incr(key)
        except ValueError:  # the window's first request: its counter does not exist yet
            # Kept for two windows: the next window reads it as its previous one.
            if self.cache.add(key, 1, timeout=2 * self.duration):
                return 1
            return self.cache.incr(key)  # another request created it first

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
