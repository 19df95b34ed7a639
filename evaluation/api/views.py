"""Thin API views: run export for staff."""

from __future__ import annotations

from django.http import Http404
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluation.models import EvalRun
from evaluation.selectors import run_export, run_get


class RunExportView(APIView):
    """GET /api/v1/evaluation/runs/<id>/export: the whole run as JSON (staff only)."""

    permission_classes = [IsAdminUser]

    def get(self, request: Request, run_id: int) -> Response:
        try:
            run = run_get(run_id=run_id)
        except EvalRun.DoesNotExist:
            raise Http404(f"evaluation run {run_id} does not exist")
        return Response(run_export(run=run))
