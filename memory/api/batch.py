"""Batch ingest: `POST /api/v1/memory/learners/<uuid>/facts/batch` with up to BATCH_MAX_ITEMS items,
each with optional `occurred_at`, `external_id` and `metadata`. Every dedup, restatement and
surprise rule applies exactly as for single facts (services.facts_ingest, set-wise); embeddings are
computed in one batched call, and the follow-ups (one entity message for all new facts, a due
summary) go to the broker together (memory/batch.py). The MCP tool `memory_ingest_batch` is this
same code (`batch_ingest`). The response says, per item and in order, what happened, so a client
can reconcile its own records:

    {"created": 2, "strengthened": 1, "duplicates": 1, "surprises": 0,
     "items": [{"index": 0, "outcome": "created", "fact_id": "9b1e…", "external_id": "m-1"},
               {"index": 1, "outcome": "strengthened", "fact_id": "40c2…", "rule": "near_duplicate",
                "cosine": 0.93},
               {"index": 2, "outcome": "duplicate", "fact_id": "9b1e…", "rule": "exact_duplicate"}, ...]}

`fact_id` (the fact's public id, a UUID) is the stored fact that holds the item: the new one
(created, surprise — then `conflicts_with` names the older fact) or the older one (strengthened
into, duplicate of). An item whose `external_id` the learner already has is a duplicate of that
fact (a safe retry). One invalid item rejects the whole request (400 naming `items[n].field`)
before anything is written."""

from __future__ import annotations

import math
from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from memory import conf
from memory.api import ids
from memory.api.views import MemoryView
from memory.batch import ingest_batch
from memory.ingest import EXTERNAL_ID_MAX_CHARS
from memory.rules import FACT_TYPES

BATCH_MAX_ITEMS = 1000


class EmbeddingField(serializers.ListField):
    """A list of numbers (ListField of FloatField) that takes the usual input, a JSON array of
    finite numbers, in one pass: DRF's number-by-number field took ~0.5 ms a 384-d vector, about
    50 ms of a 100-item batch. Anything else (strings, NaN, nulls, not a list) goes the
    number-by-number way, with its per-number errors."""

    def __init__(self, **kwargs):
        super().__init__(child=serializers.FloatField(), **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, list) and data and all(type(x) is float or type(x) is int for x in data):
            try:
                values = [float(x) for x in data]
            except OverflowError:  # an integer too big for a float: the field's own error
                return super().to_internal_value(data)
            if all(map(math.isfinite, values)):
                return values
        return super().to_internal_value(data)


class BatchItemSerializer(serializers.Serializer):
    content = serializers.CharField(max_length=conf.FACT_MAX_CHARS, trim_whitespace=True)
    fact_type = serializers.ChoiceField(choices=FACT_TYPES, required=False, default="insight")
    confidence = serializers.FloatField(required=False, default=0.8, min_value=0.0, max_value=1.0)
    occurred_at = serializers.DateTimeField(required=False, allow_null=True, help_text="when it was said")
    external_id = serializers.CharField(required=False, allow_blank=True, max_length=EXTERNAL_ID_MAX_CHARS,
                                        help_text="the client's own id; a resend of a known id is a duplicate")
    metadata = serializers.DictField(required=False, help_text="free labels, returned on every search hit")
    embedding = EmbeddingField(required=False, allow_empty=False)


class BatchInputSerializer(serializers.Serializer):
    items = BatchItemSerializer(many=True, allow_empty=False)

    def validate_items(self, items):
        if len(items) > BATCH_MAX_ITEMS:
            raise serializers.ValidationError(f"at most {BATCH_MAX_ITEMS} items per request")
        return items


class BatchItemOutSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    outcome = serializers.ChoiceField(choices=("created", "surprise", "strengthened", "duplicate"))
    fact_id = serializers.UUIDField(allow_null=True)
    rule = serializers.CharField(required=False)
    cosine = serializers.FloatField(required=False)
    conflicts_with = serializers.UUIDField(required=False)
    external_id = serializers.CharField(required=False)


class BatchOutputSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    strengthened = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    surprises = serializers.IntegerField()
    items = BatchItemOutSerializer(many=True)


def batch_ingest(*, learner_id: int, data: Any, source_agent: str, service: str) -> dict[str, Any]:
    """Validate a batch body (`{"items": [...]}`; raises the serializer's ValidationError, which the
    one error handler renders), ingest it with its follow-ups published together, and return the
    response body: counts and per-item outcomes with public ids. The REST endpoint and the MCP
    tool `memory_ingest_batch` both answer with this, so they cannot drift apart."""
    s = BatchInputSerializer(data=data)
    s.is_valid(raise_exception=True)
    result = ingest_batch(learner_id=learner_id, items=[dict(x) for x in s.validated_data["items"]],
                          source_agent=source_agent, service=service)
    return {"created": sum(1 for i in result.items if i.outcome == "created"),
            "strengthened": len(result.strengthened), "duplicates": result.duplicates,
            "surprises": len(result.surprises), "items": ids.batch_items_out([i.as_dict() for i in result.items])}


class LearnerFactsBatchView(MemoryView):
    @extend_schema(request=BatchInputSerializer, responses={201: BatchOutputSerializer})
    def post(self, request: Request, research_id: UUID) -> Response:
        learner = self.learner(request, research_id)
        body = batch_ingest(learner_id=learner.pk, data=request.data, source_agent="api", service="memory.api.batch")
        return Response(body, status=status.HTTP_201_CREATED)
