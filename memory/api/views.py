"""Memory REST API (thin views). Scoping: an API client sees only its own learners; staff users see
all. Errors use the project shape {"error": {"code", "message", "field"}}."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bloom.api_errors import error_response
from memory import rules, selectors, services
from memory.api.serializers import (
    FactHistoryOutputSerializer,
    FactListFilterSerializer,
    FactOutputSerializer,
    IngestInputSerializer,
    SearchInputSerializer,
)
from memory.ingest import ingest_facts, ingest_text


def _validation_error(exc: ValidationError) -> Response:
    detail = exc.detail
    field, message = None, str(detail)
    while isinstance(detail, dict | list) and detail:
        if isinstance(detail, dict):
            field = str(next(iter(detail)))
            detail = detail[field]
        else:
            detail = detail[0]
        message = str(detail)
    return error_response("invalid", message, field=field)


def _is_staff(request: Request) -> bool:
    return bool(getattr(request.user, "is_staff", False))


def _client_id(request: Request) -> int | None:
    """The coaching API client behind the request (token auth sets request.user to the ApiClient)."""
    ApiClient = apps.get_model("coaching", "ApiClient")
    if isinstance(request.user, ApiClient):
        return request.user.pk
    client_id = getattr(request.auth, "client_id", None)
    return int(client_id) if client_id is not None else None


def learner_allowed(request: Request, learner_id: int) -> bool:
    Learner = apps.get_model("coaching", "Learner")
    qs = Learner.objects.filter(pk=learner_id)
    if _is_staff(request):
        return qs.exists()
    client_id = _client_id(request)
    return client_id is not None and qs.filter(client_id=client_id).exists()


class MemoryView(APIView):
    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, rules.MemoryInputError):
            return error_response(exc.code, str(exc), field=exc.field)
        if isinstance(exc, ValidationError):
            return _validation_error(exc)
        return super().handle_exception(exc)

    def check_learner(self, request: Request, learner_id: int) -> Response | None:
        if not learner_allowed(request, learner_id):
            # 404, not 403: another client's learner ids are not disclosed.
            return error_response("not_found", "learner not found", status_code=404)
        return None


def _fact_out(fact: Any) -> dict[str, Any]:
    return FactOutputSerializer(fact).data


class LearnerFactsView(MemoryView):
    """GET: list a learner's facts (filters: fact_type, tier, surprise, archived). POST: ingest
    free text (split into ≤500-char passages) or a list of facts."""

    def get(self, request: Request, learner_id: int) -> Response:
        if (denied := self.check_learner(request, learner_id)) is not None:
            return denied
        f = FactListFilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        qs = selectors.fact_list(learner_id=learner_id, **{k: v for k, v in f.validated_data.items() if v is not None})
        try:
            limit = max(1, min(int(request.query_params.get("limit", 50)), 200))
            offset = max(0, int(request.query_params.get("offset", 0)))
        except ValueError:
            return error_response("invalid", "limit and offset must be integers", field="limit")
        total = qs.count()
        return Response({"count": total, "results": [_fact_out(x) for x in qs[offset: offset + limit]]})

    def post(self, request: Request, learner_id: int) -> Response:
        if (denied := self.check_learner(request, learner_id)) is not None:
            return denied
        s = IngestInputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        data = s.validated_data
        if data.get("text"):
            result = ingest_text(learner_id=learner_id, text=data["text"], fact_type=data["fact_type"],
                                 source_agent="api", service="memory.api")
        else:
            result = ingest_facts(learner_id=learner_id, items=[dict(x) for x in data["facts"]],
                                  source_agent="api", service="memory.api")
        return Response(result.as_dict(), status=status.HTTP_201_CREATED)


class LearnerSearchView(MemoryView):
    def get(self, request: Request, learner_id: int) -> Response:
        if (denied := self.check_learner(request, learner_id)) is not None:
            return denied
        s = SearchInputSerializer(data=request.query_params)
        s.is_valid(raise_exception=True)
        results = selectors.search_memory(learner_id=learner_id, query=s.validated_data["q"],
                                          limit=s.validated_data["limit"])
        return Response({"results": results})


class GlobalSearchView(MemoryView):
    def get(self, request: Request) -> Response:
        if not _is_staff(request):
            return error_response("forbidden", "global search is for staff", status_code=403)
        s = SearchInputSerializer(data=request.query_params)
        s.is_valid(raise_exception=True)
        return Response({"results": selectors.search_memory_global(query=s.validated_data["q"],
                                                                    limit=s.validated_data["limit"])})


class LearnerContextView(MemoryView):
    def get(self, request: Request, learner_id: int) -> Response:
        if (denied := self.check_learner(request, learner_id)) is not None:
            return denied
        return Response({"context": selectors.build_context(learner_id)})


class LearnerForgetView(MemoryView):
    def delete(self, request: Request, learner_id: int) -> Response:
        if (denied := self.check_learner(request, learner_id)) is not None:
            return denied
        return Response({"deleted": services.learner_forget(learner_id=learner_id)})


class FactDetailView(MemoryView):
    def _get(self, request: Request, fact_id: int):
        fact = selectors.fact_get(fact_id=fact_id)
        if fact is None or not learner_allowed(request, fact.learner_id):
            return None
        return fact

    def get(self, request: Request, fact_id: int) -> Response:
        fact = self._get(request, fact_id)
        if fact is None:
            return error_response("not_found", "fact not found", status_code=404)
        history = FactHistoryOutputSerializer(selectors.fact_history(fact_id=fact_id), many=True).data
        return Response({**_fact_out(fact), "history": history})

    def delete(self, request: Request, fact_id: int) -> Response:
        fact = self._get(request, fact_id)
        if fact is None:
            return error_response("not_found", "fact not found", status_code=404)
        services.fact_delete(fact_id=fact_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


