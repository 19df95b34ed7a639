"""Memory REST API (thin views). Learners are addressed by their UUID (the `id` that
`POST /api/v1/learners` returns) and facts by theirs (`memory.api.ids`), never by a database
key. Scoping: an API client sees only its own learners; staff users see all; another client's
learner or fact is a 404 (ids are not disclosed). Errors use the project shape
{"error": {"code", "message", "field", "errors"}} (core.errors)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import ApplicationError, error_response
from core.identity.models import ApiClient, Learner
from core.schema import ErrorOut
from memory import revisions, selectors
from memory.api import ids, queries
from memory.api.serializers import (
    ContextOutputSerializer,
    FactDetailSerializer,
    FactFilterSerializer,
    FactHistoryOutputSerializer,
    FactOutputSerializer,
    FactPatchSerializer,
    ForgetOutputSerializer,
    IngestInputSerializer,
    IngestOutputSerializer,
    SearchInputSerializer,
    SearchOutputSerializer,
    SearchQuerySerializer,
    SupersedeSerializer,
)
from memory.ingest import ingest_facts, ingest_text
from memory.services.forget import fact_delete, learner_forget


def _is_staff(request: Request) -> bool:
    return bool(getattr(request.user, "is_staff", False))


def _client_id(request: Request) -> int | None:
    """The coaching API client behind the request (token auth sets request.user to the ApiClient)."""
    if isinstance(request.user, ApiClient):
        return request.user.pk
    client_id = getattr(request.auth, "client_id", None)
    return int(client_id) if client_id is not None else None


def learner_allowed(request: Request, learner_id: int) -> bool:
    qs = Learner.objects.filter(pk=learner_id)
    if _is_staff(request):
        return qs.exists()
    client_id = _client_id(request)
    return client_id is not None and qs.filter(client_id=client_id).exists()


class FactPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200


class MemoryView(APIView):
    def learner(self, request: Request, research_id: UUID) -> Any:
        learner = queries.learner_for(research_id=research_id, client_id=_client_id(request),
                                      staff=_is_staff(request))
        if learner is None:
            # 404, not 403: another client's learner ids are not disclosed.
            raise ApplicationError("learner not found", code="not_found", status=404)
        return learner

    def fact(self, request: Request, fact_id: UUID) -> Any:
        fact = ids.fact_get(public_id=fact_id)
        if fact is None or not learner_allowed(request, fact.learner_id):
            raise ApplicationError("fact not found", code="not_found", status=404)
        return fact


def _fact_out(fact_id: int, *, history: bool = False) -> dict[str, Any]:
    fact = ids.with_public_refs(selectors.fact_list().filter(pk=fact_id).select_related("learner")).get()
    if not history:
        return FactOutputSerializer(fact).data
    # FactDetailSerializer describes this shape in the schema.
    return {**FactOutputSerializer(fact).data,
            "history": FactHistoryOutputSerializer(selectors.fact_history(fact_id=fact_id), many=True).data}


def _query(serializer_class, request: Request) -> dict[str, Any]:
    s = serializer_class(data=request.query_params)
    s.is_valid(raise_exception=True)
    return s.validated_data


class LearnerFactsView(MemoryView):
    pagination_class = FactPagination  # read by the schema generator (next/previous, limit/offset)

    @extend_schema(summary="List a learner's facts", parameters=[FactFilterSerializer],
                   responses=FactOutputSerializer(many=True))
    def get(self, request: Request, research_id: UUID) -> Response:
        """Newest first, paginated (`limit`/`offset`, `next`/`previous` links). Superseded facts
        are left out unless `include_superseded=true`."""
        learner = self.learner(request, research_id)
        filters = _query(FactFilterSerializer, request)
        paginator = FactPagination()
        page = paginator.paginate_queryset(queries.filtered_facts(learner_id=learner.pk, filters=filters),
                                           request, view=self)
        return paginator.get_paginated_response(FactOutputSerializer(page, many=True).data)

    @extend_schema(summary="Add memory: free text or a list of facts", request=IngestInputSerializer,
                   responses={201: IngestOutputSerializer})
    def post(self, request: Request, research_id: UUID) -> Response:
        """Free text is split into ≤500-character passages; facts go through the same dedup,
        restatement and surprise rules as extracted facts."""
        learner = self.learner(request, research_id)
        s = IngestInputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        data = s.validated_data
        if data.get("text"):
            result = ingest_text(learner_id=learner.pk, text=data["text"], fact_type=data["fact_type"],
                                 source_agent="api", service="memory.api")
        else:
            result = ingest_facts(learner_id=learner.pk, items=[dict(x) for x in data["facts"]],
                                  source_agent="api", service="memory.api")
        return Response(ids.ingest_out(result.as_dict()), status=status.HTTP_201_CREATED)


# The query parameters of a search without filters. Such a search (most of them) is validated by
# the search's own three fields: a serializer deep-copies every declared field when it is made, and
# the filtered form's fourteen took 556-602 µs a search against 151-234 µs for the three
# (`bench/run.py api_overhead`). The three are the filtered form's own, inherited.
_UNFILTERED_PARAMS = frozenset(SearchInputSerializer().fields)


def _search_serializer(request: Request) -> type[SearchInputSerializer]:
    return SearchInputSerializer if request.query_params.keys() <= _UNFILTERED_PARAMS else SearchQuerySerializer


class LearnerSearchView(MemoryView):
    @extend_schema(summary="Search a learner's memory", parameters=[SearchQuerySerializer],
                   responses=SearchOutputSerializer)
    def get(self, request: Request, research_id: UUID) -> Response:
        """Hybrid (vector + full text) × decay, best first. The filters are those of the fact
        list; superseded facts only with `include_superseded=true`."""
        learner = self.learner(request, research_id)
        q = _query(_search_serializer(request), request)
        return Response({"results": queries.search(learner_id=learner.pk, query=q["q"], limit=q["limit"],
                                                   filters=q, touch=q["touch"])})


class GlobalSearchView(MemoryView):
    @extend_schema(summary="Search every learner's memory (staff)", parameters=[SearchInputSerializer],
                   responses=SearchOutputSerializer)
    def get(self, request: Request) -> Response:
        if not _is_staff(request):
            return error_response("forbidden", "global search is for staff", status_code=403)
        q = _query(SearchInputSerializer, request)
        hits = selectors.search_memory_global(query=q["q"], limit=q["limit"], touch=q["touch"], public_refs=True)
        return Response({"results": queries._annotate(hits)})


class LearnerContextView(MemoryView):
    @extend_schema(summary="The memory block the coach reads", responses=ContextOutputSerializer)
    def get(self, request: Request, research_id: UUID) -> Response:
        learner = self.learner(request, research_id)
        return Response({"context": selectors.build_context(learner.pk)})


class LearnerForgetView(MemoryView):
    @extend_schema(summary="Forget everything memory holds about a learner", request=None,
                   responses=ForgetOutputSerializer)
    def delete(self, request: Request, research_id: UUID) -> Response:
        """Facts, summaries, entities, relations; the learner's telemetry rows are anonymised.
        The learner and their conversations stay (`DELETE /api/v1/learners/{id}` erases those)."""
        learner = self.learner(request, research_id)
        return Response({"deleted": learner_forget(learner_id=learner.pk)})


class FactDetailView(MemoryView):
    @extend_schema(summary="One fact with its history", responses=FactDetailSerializer)
    def get(self, request: Request, fact_id: UUID) -> Response:
        return Response(_fact_out(self.fact(request, fact_id).pk, history=True))

    @extend_schema(summary="Edit a fact's text or type", request=FactPatchSerializer,
                   responses={200: FactDetailSerializer, 409: ErrorOut})
    def patch(self, request: Request, fact_id: UUID) -> Response:
        """New text is re-embedded; a history row records before and after. Text the learner
        already has in another fact is a 409; a superseded fact cannot be edited (409)."""
        fact = self.fact(request, fact_id)
        s = FactPatchSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        revisions.fact_update(fact_id=fact.pk, service="memory.api", **s.validated_data)
        return Response(_fact_out(fact.pk, history=True))

    @extend_schema(summary="Delete a fact", request=None, responses={204: None})
    def delete(self, request: Request, fact_id: UUID) -> Response:
        fact = self.fact(request, fact_id)
        fact_delete(fact_id=fact.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FactHistoryView(MemoryView):
    @extend_schema(summary="A fact's change history", responses=FactHistoryOutputSerializer(many=True))
    def get(self, request: Request, fact_id: UUID) -> Response:
        fact = self.fact(request, fact_id)
        return Response(FactHistoryOutputSerializer(selectors.fact_history(fact_id=fact.pk), many=True).data)


class FactSupersedeView(MemoryView):
    @extend_schema(summary="Mark a fact as replaced by another", request=SupersedeSerializer,
                   responses={200: FactDetailSerializer, 409: ErrorOut})
    def post(self, request: Request, fact_id: UUID) -> Response:
        """The fact stays, with its history, gets `valid_to` = now and `superseded_by`; it leaves
        the coach's context and default search."""
        fact = self.fact(request, fact_id)
        s = SupersedeSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        by = ids.fact_get(public_id=s.validated_data["superseded_by"])
        if by is None or by.learner_id != fact.learner_id:
            raise ApplicationError("replacement fact not found", code="not_found", status=404)
        revisions.fact_supersede(fact_id=fact.pk, by_fact_id=by.pk, service="memory.api")
        return Response(_fact_out(fact.pk, history=True))
