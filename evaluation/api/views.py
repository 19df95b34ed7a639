"""Thin API views: run export for staff."""

from __future__ import annotations

from uuid import UUID

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluation.models import EvalRun
from evaluation.selectors import run_export, run_get


# Schema of the export (what `evaluation.selectors.run_export` returns); free-form parts are
# the stored JSON of a run (config, checks, summary), typed as JSON values.
class _Run(serializers.Serializer):
    id = serializers.UUIDField(help_text="the run's id, as in the export URL")
    label = serializers.CharField()
    mode = serializers.CharField()
    set = serializers.CharField()
    rubric = serializers.CharField(allow_null=True)
    config = serializers.JSONField()
    status = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    wall_time_s = serializers.FloatField(allow_null=True)
    replay_time_s = serializers.FloatField(allow_null=True)
    judge_time_s = serializers.FloatField(allow_null=True)
    model_calls = serializers.IntegerField()
    judge_calls = serializers.IntegerField()


class _Reply(serializers.Serializer):
    transcript = serializers.CharField()
    turn = serializers.IntegerField()
    learner = serializers.CharField()
    reply = serializers.CharField()
    specialist = serializers.CharField()
    outcome = serializers.CharField()
    checks = serializers.JSONField()
    scores = serializers.ListField(child=serializers.JSONField())


class RunExportOut(serializers.Serializer):
    run = _Run()
    summary = serializers.JSONField()
    replies = _Reply(many=True, help_text="every reply with its checks and judge scores (more keys per reply)")
    comparisons_as_candidate = serializers.ListField(
        child=serializers.JSONField(), help_text="comparisons with this run as candidate; runs by their id (UUID)")


class RunExportView(APIView):
    """GET /api/v1/evaluation/runs/<id>/export: the whole run as JSON (staff only). The id is the
    run's UUID; an integer matches no route (bloom/urls.py answers it with the 404 of every route)."""

    permission_classes = [IsAdminUser]

    @extend_schema(summary="Export an evaluation run (staff)", responses=RunExportOut)
    def get(self, request: Request, run_id: UUID) -> Response:
        try:
            run = run_get(public_id=run_id)
        except EvalRun.DoesNotExist:
            raise Http404(f"evaluation run {run_id} does not exist")
        return Response(run_export(run=run))
