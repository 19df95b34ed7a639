from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from bloom.health import healthz

api_v1 = [
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
