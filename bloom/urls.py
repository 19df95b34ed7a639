import re
import uuid

from django.contrib import admin
from django.http import HttpResponseRedirect
from django.urls import Resolver404, include, path, re_path, resolve
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from bloom import api as bloom_api
from core.errors import error_json
from core.health import healthz
from core.identity import api as api_tokens

# Resources a client addresses by a UUID `id` (a learner's is its research id; staff address
# evaluation runs and studies the same way).
BY_UUID = re.compile(r"^/api/v1/(?:memory/|evaluation/|research/)?"
                     r"(?P<kind>learners|conversations|sessions|facts|tokens|runs|studies)/(?P<id>[^/]+)")


def not_an_id(path_: str) -> str | None:
    """Why a path with an integer (an old database key) or a malformed id matched nothing."""
    found = BY_UUID.match(path_)
    if found is None:
        return None
    try:
        uuid.UUID(found["id"])
    except ValueError:
        kind = found["kind"]
        return (f"No API route {path_}: {found['id']!r} is not an id. {kind.capitalize()} are addressed by the "
                f"UUID `id` their responses carry.")
    return None


@csrf_exempt  # it changes nothing; without this an unknown POST was a 403 naming CSRF, not a 404
def other_spelling(request):
    """One URL style under /api/v1/: no trailing slash. A path that only matches with its slash
    toggled (an old `…/facts/` link) is redirected to the canonical path when that is safe to
    repeat (GET/HEAD: 308, which keeps the method), and is a 404 naming the canonical path
    otherwise, so a write is never silently re-sent somewhere else."""
    path_ = request.path
    other = path_[:-1] if path_.endswith("/") else path_ + "/"
    try:
        match = resolve(other)
    except Resolver404:
        match = None
    if match is None or match.func is other_spelling:
        return error_json(404, message=not_an_id(path_) or f"No API route {path_}.")
    if request.method in ("GET", "HEAD"):
        query = request.META.get("QUERY_STRING", "")
        response = HttpResponseRedirect(other + (f"?{query}" if query else ""))
        response.status_code = 308
        return response
    return error_json(404, message=f"No API route {path_}; the route is {other} (no trailing slash under "
                                   "/api/v1/).", code="not_found")


api_v1 = [
    path("tokens", api_tokens.TokenListView.as_view(), name="token-list"),
    path("tokens/rotate", api_tokens.TokenRotateView.as_view(), name="token-rotate"),
    path("tokens/<uuid:token_id>", api_tokens.TokenRevokeView.as_view(), name="token-revoke"),
    path("learners/<uuid:research_id>", bloom_api.LearnerDetailView.as_view(), name="learner-detail"),
    path("", include("coaching.api.urls")),
    path("memory/", include("memory.api.urls")),
    path("telemetry/", include("telemetry.api.urls")),
    path("evaluation/", include("evaluation.api.urls")),
    re_path(r"^.*$", other_spelling),  # last: only what nothing else matched
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("", include("coaching.urls")),
]
