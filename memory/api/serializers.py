"""Input/output serializers for the memory API. Validation rules live in memory.rules; these
serializers only shape the request (types) and delegate the rules so the API, the MCP server and
the extractor agree."""

from __future__ import annotations

from rest_framework import serializers

from memory import conf
from memory.rules import FACT_TYPES


class FactInputSerializer(serializers.Serializer):
    fact_type = serializers.ChoiceField(choices=FACT_TYPES)
    content = serializers.CharField(max_length=conf.FACT_MAX_CHARS, trim_whitespace=True)
    # A string such as "high" is a 400, not a silent default (strict API input).
    confidence = serializers.FloatField(required=False, default=0.8, min_value=0.0, max_value=1.0)
    embedding = serializers.ListField(child=serializers.FloatField(allow_null=False), required=False,
                                      allow_empty=False)


class IngestInputSerializer(serializers.Serializer):
    text = serializers.CharField(required=False, max_length=20_000, trim_whitespace=True)
    fact_type = serializers.ChoiceField(choices=FACT_TYPES, required=False, default="insight")
    facts = FactInputSerializer(many=True, required=False)

    def validate(self, attrs):
        if bool(attrs.get("text")) == bool(attrs.get("facts")):
            raise serializers.ValidationError({"text": "give either `text` or a non-empty `facts` list"})
        if attrs.get("facts") and len(attrs["facts"]) > 100:
            raise serializers.ValidationError({"facts": "at most 100 facts per request"})
        return attrs


class SearchInputSerializer(serializers.Serializer):
    q = serializers.CharField(max_length=conf.QUERY_MAX_CHARS, trim_whitespace=True)
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=conf.SEARCH_MAX_LIMIT)


class FactListFilterSerializer(serializers.Serializer):
    fact_type = serializers.ChoiceField(choices=FACT_TYPES, required=False)
    tier = serializers.ChoiceField(choices=("hot", "warm", "cold"), required=False)
    surprise = serializers.BooleanField(required=False, allow_null=True, default=None)
    archived = serializers.BooleanField(required=False, allow_null=True, default=None)


class FactOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    learner_id = serializers.IntegerField()
    fact_type = serializers.CharField()
    content = serializers.CharField()
    confidence = serializers.FloatField()
    source_message_id = serializers.IntegerField(allow_null=True)
    source_agent = serializers.CharField()
    created_at = serializers.DateTimeField()
    last_accessed_at = serializers.DateTimeField()
    access_count = serializers.IntegerField()
    tier = serializers.CharField()
    archived = serializers.BooleanField()
    surprise = serializers.BooleanField()
    surprise_reason = serializers.CharField()
    conflicts_with_id = serializers.IntegerField(allow_null=True)
    superseded_by_id = serializers.IntegerField(allow_null=True)
    summary_id = serializers.IntegerField(allow_null=True)


class FactHistoryOutputSerializer(serializers.Serializer):
    change = serializers.CharField()
    before = serializers.JSONField()
    after = serializers.JSONField()
    service = serializers.CharField()
    at = serializers.DateTimeField()
