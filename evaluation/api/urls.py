from django.urls import path

from evaluation.api.views import RunExportView

urlpatterns = [
    path("runs/<uuid:run_id>/export", RunExportView.as_view(), name="evaluation-run-export"),
]
