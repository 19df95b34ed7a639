from django.urls import path

from telemetry.api import views

app_name = "telemetry"

urlpatterns = [
    path("calls/", views.CallListView.as_view(), name="calls"),
    path("traces/<str:trace_id>/", views.TraceView.as_view(), name="trace"),
    path("aggregates/", views.AggregatesView.as_view(), name="aggregates"),
    path("reset/", views.ResetView.as_view(), name="reset"),
]
