"""Per-client API throttling.

One bucket per API client (all of a client's tokens share it: rotating a token must not reset
the budget), one per staff user on a session, and one per IP address for anonymous requests.
The rate comes from settings (`BLOOM_THROTTLE_RATE`, e.g. "600/min"). A throttled request gets
429 with `Retry-After` in the project's error shape (DRF raises `Throttled`; the shared
exception handler renders it).

Counters live in Django's cache: the in-process default counts per web process, so a deployment
with several processes sets `BLOOM_CACHE_URL` to a Redis URL to share the counters."""

from __future__ import annotations

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle


class ClientRateThrottle(SimpleRateThrottle):
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
