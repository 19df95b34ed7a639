from django.urls import path

from telemetry.api import views

app_name = "telemetry"

# No trailing slash: the one style of /api/v1/ (see bloom/urls.py).
urlpatterns = [
    path("calls", views.CallListView.as_view(), name="calls"),
    path("traces/<str:trace_id>", views.TraceView.as_view(), name="trace"),
    path("aggregates", views.AggregatesView.as_view(), name="aggregates"),
    path("reset", views.ResetView.as_view(), name="reset"),
]
