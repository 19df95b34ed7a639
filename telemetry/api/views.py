"""Inspect API (staff only). Thin views: parse input, call a selector/service, serialise.
Errors are the API's one shape (core.errors)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.permissions import BasePermission, IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import ApplicationError
from core.identity.models import Conversation, Learner
from telemetry import selectors, services
from telemetry.api.serializers import (
    AggregateOutput,
    AggregatesOutput,
    CallFilterInput,
    ModelCallOutput,
    ResetInput,
    ResetOutput,
    TraceOutput,
    WindowInput,
)
from telemetry.models import ModelCall


class TelemetryAPIView(APIView):
    permission_classes = [IsAdminUser]


def _learner_pk(raw: str | None) -> int | None:
    """Telemetry rows carry the internal learner key; clients know the learner's UUID (and only
    that: an integer key is refused like any other non-UUID)."""
    if not raw:
        return None
    try:
        research_id = UUID(raw)
    except ValueError:
        raise ApplicationError("learner must be the learner's id (UUID)", field="learner") from None
    pk = Learner.objects.filter(research_id=research_id).values_list("pk", flat=True)
    return pk.first() or -1  # an unknown learner has no calls


def public_refs(calls: Iterable[ModelCall]) -> dict[str, dict[int, UUID]]:
    """The public ids of the learners and conversations these calls name: two queries a page."""
    calls = list(calls)
    learners = {c.learner_id for c in calls if c.learner_id is not None}
    conversations = {c.conversation_id for c in calls if c.conversation_id is not None}
    return {"learners": dict(Learner.objects.filter(pk__in=learners).values_list("pk", "research_id"))
            if learners else {},
            "conversations": dict(Conversation.objects.filter(pk__in=conversations).values_list("pk", "public_id"))
            if conversations else {}}


class CallListView(TelemetryAPIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(summary="Model calls, newest first (staff)", parameters=[CallFilterInput],
                   responses=ModelCallOutput(many=True))
    def get(self, request):
        params = CallFilterInput(data=request.query_params)
        params.is_valid(raise_exception=True)
        f = params.validated_data
        qs = selectors.model_call_list(operation=f.get("operation", ""), model=f.get("model", ""),
                                       status=f.get("status", ""), learner_id=_learner_pk(f.get("learner")),
                                       trace_id=f.get("trace", ""), agent=f.get("agent", ""),
                                       since=f.get("since"), until=f.get("until"))
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(
            ModelCallOutput(page, many=True, context={"refs": public_refs(page)}).data)


def _node(node: dict[str, Any], refs: dict[str, dict[int, UUID]]) -> dict[str, Any]:
    return {**ModelCallOutput(node["call"], context={"refs": refs}).data,
            "children": [_node(c, refs) for c in node["children"]]}


class TraceView(TelemetryAPIView):
    @extend_schema(summary="Every model call of one trace, as a tree (staff)", responses=TraceOutput)
    def get(self, request, trace_id: str):
        roots = selectors.trace_tree(trace_id=trace_id)
        if not roots:
            raise ApplicationError(f"no calls recorded for trace {trace_id}", code="not_found", field="trace_id",
                                   status=404)
        calls = selectors.trace_calls(trace_id=trace_id)
        refs = public_refs(calls)
        return Response({"trace_id": trace_id, "count": len(calls), "calls": [_node(r, refs) for r in roots]})


class AggregatesView(TelemetryAPIView):
    @extend_schema(summary="Counts, error rate and latency percentiles per model and operation (staff)",
                   parameters=[WindowInput], responses=AggregatesOutput)
    def get(self, request):
        raw = request.query_params.get("window", "24h")
        window = selectors.parse_window(raw)
        rows = selectors.call_aggregates(window=window)
        return Response({"window": raw, "groups": AggregateOutput(rows, many=True).data})


class CanResetTelemetry(BasePermission):
    message = "resetting telemetry needs the telemetry.reset_telemetry permission"

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_staff and request.user.has_perm("telemetry.reset_telemetry"))


class ResetView(TelemetryAPIView):
    permission_classes = [IsAdminUser, CanResetTelemetry]

    @extend_schema(summary="Delete every telemetry row (needs telemetry.reset_telemetry)", request=ResetInput,
                   responses=ResetOutput)
    def post(self, request):
        body = ResetInput(data=request.data)
        body.is_valid(raise_exception=True)
        deleted = services.telemetry_reset(confirm=body.validated_data["confirm"])
        return Response({"deleted": deleted})
