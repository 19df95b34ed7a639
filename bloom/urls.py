from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from bloom import api_tokens
from bloom.health import healthz

api_v1 = [
    path("tokens", api_tokens.TokenListView.as_view(), name="token-list"),
    path("tokens/rotate", api_tokens.TokenRotateView.as_view(), name="token-rotate"),
    path("tokens/<int:token_id>", api_tokens.TokenRevokeView.as_view(), name="token-revoke"),
    path("", include("coaching.api.urls")),
    path("memory/", include("memory.api.urls")),
    path("telemetry/", include("telemetry.api.urls")),
    path("evaluation/", include("evaluation.api.urls")),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("", include("coaching.urls")),
]
