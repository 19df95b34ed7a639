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
    touch = serializers.BooleanField(
        required=False, default=True,
        help_text="false: a read-only search (the hits are not counted as accessed, so their decay is untouched)")


class FactFilterSerializer(serializers.Serializer):
    """Filters of the fact list and the learner search (query parameters)."""

    fact_type = serializers.ChoiceField(choices=FACT_TYPES, required=False)
    tier = serializers.ChoiceField(choices=("hot", "warm", "cold"), required=False)
    surprise = serializers.BooleanField(required=False, allow_null=True, default=None)
    archived = serializers.BooleanField(required=False, allow_null=True, default=None)
    include_superseded = serializers.BooleanField(
        required=False, default=False, help_text="also return facts another fact superseded (hidden by default)")
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)
    accessed_after = serializers.DateTimeField(required=False)
    accessed_before = serializers.DateTimeField(required=False)
    source_agent = serializers.CharField(required=False, max_length=40, help_text="extractor, api, mcp, …")
    conversation = serializers.UUIDField(required=False,
                                         help_text="only facts extracted from this conversation (its id)")

    def validate(self, attrs):
        for start, end in (("created_after", "created_before"), ("accessed_after", "accessed_before")):
            if attrs.get(start) and attrs.get(end) and attrs[start] >= attrs[end]:
                raise serializers.ValidationError({end: f"{end} must be after {start}"})
        return attrs


class SearchQuerySerializer(SearchInputSerializer, FactFilterSerializer):
    pass


class FactPatchSerializer(serializers.Serializer):
    content = serializers.CharField(required=False, max_length=conf.FACT_MAX_CHARS, trim_whitespace=True)
    fact_type = serializers.ChoiceField(choices=FACT_TYPES, required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError({"content": "send content and/or fact_type"})
        return attrs


class FactIdField(serializers.UUIDField):
    """A fact's id as the API returns it, a UUID string. DRF would read a JSON integer as a
    128-bit UUID; here it is refused, so an old integer key is a 400, not a puzzling 404."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


class SupersedeSerializer(serializers.Serializer):
    superseded_by = FactIdField(help_text="id of the fact (same learner) that replaces this one")


class FactOutputSerializer(serializers.Serializer):
    """Reads the public ids of the facts, the message and the conversation it points at from annotations
    (memory.api.ids.with_public_refs), so a page of facts is one query."""

    id = serializers.UUIDField(source="public_id")
    learner = serializers.UUIDField(source="learner.research_id", help_text="the learner's id (UUID)")
    fact_type = serializers.ChoiceField(choices=FACT_TYPES)
    content = serializers.CharField()
    confidence = serializers.FloatField()
    source_message_id = serializers.UUIDField(source="source_message_public_id", allow_null=True,
                                              help_text="the message it was extracted from (its id), if any")
    source_conversation_id = serializers.UUIDField(source="source_conversation_public_id", allow_null=True)
    source_agent = serializers.CharField()
    created_at = serializers.DateTimeField()
    last_accessed_at = serializers.DateTimeField()
    access_count = serializers.IntegerField()
    tier = serializers.ChoiceField(choices=("hot", "warm", "cold"))
    archived = serializers.BooleanField()
    surprise = serializers.BooleanField()
    surprise_reason = serializers.CharField()
    conflicts_with_id = serializers.UUIDField(source="conflicts_with_public_id", allow_null=True)
    superseded_by_id = serializers.UUIDField(source="superseded_by_public_id", allow_null=True)
    valid_to = serializers.DateTimeField(allow_null=True, help_text="when a superseded fact stopped being valid")
    summary_id = serializers.UUIDField(source="summary_public_id", allow_null=True,
                                       help_text="the summary that covers this fact (its id), if any")
    occurred_at = serializers.DateTimeField(allow_null=True, help_text="when it was said (batch ingest)")
    external_id = serializers.CharField(help_text="the client's own id for the fact (batch ingest)")
    metadata = serializers.DictField(help_text="the client's labels (batch ingest)")


class FactHistoryOutputSerializer(serializers.Serializer):
    change = serializers.CharField()
    before = serializers.JSONField(help_text="the fact before the change; other facts and summaries by their id "
                                             "(UUID): superseded_by, conflicts_with, summary")
    after = serializers.JSONField(help_text="the fact after the change, with what the change adds (by, replaces, "
                                            "merged: fact ids; source_conversation: a conversation id)")
    service = serializers.CharField()
    at = serializers.DateTimeField()


class FactDetailSerializer(FactOutputSerializer):
    history = FactHistoryOutputSerializer(many=True)


class IngestOutputSerializer(serializers.Serializer):
    created = serializers.ListField(child=serializers.UUIDField(), help_text="ids of new facts")
    strengthened = serializers.ListField(child=serializers.UUIDField(),
                                         help_text="ids of older facts a near-duplicate strengthened")
    surprises = serializers.ListField(child=serializers.UUIDField(),
                                      help_text="ids of new facts that conflict with an older one")
    duplicates = serializers.IntegerField(help_text="exact duplicates dropped")


class SearchSourceSerializer(serializers.Serializer):
    message_id = serializers.UUIDField(allow_null=True, help_text="the message it was extracted from (its id)")
    conversation_id = serializers.UUIDField(allow_null=True)
    agent = serializers.CharField()


class SearchPartsSerializer(serializers.Serializer):
    vector = serializers.FloatField(help_text="cosine of the fact to the query")
    text = serializers.FloatField(help_text="BM25 of the fact for the query's words, with the learner's term "
                                            "statistics; 0 when it shares no word with the query")
    decay = serializers.FloatField()
    hubness = serializers.FloatField(help_text=f"mean cosine of the fact to its {conf.SEARCH_HUB_K} nearest other "
                                               f"facts of the learner; a learner's search subtracts "
                                               f"{conf.SEARCH_HUB_WEIGHT} x hubness from the cosine, a global "
                                               f"one {conf.GLOBAL_HUB_WEIGHT} x")
    vector_rank = serializers.IntegerField(allow_null=True, help_text="rank on the vector side (from 1); null when "
                                                                      "that side did not return the fact")
    text_rank = serializers.IntegerField(allow_null=True, help_text="rank on the text side (from 1); null when the "
                                                                    "fact shares no word with the query or ranked "
                                                                    "below the side's candidates")
    text_share = serializers.FloatField(allow_null=True, help_text="the text score as a share (0-1) of the most "
                                                                   "the query's words could score among the "
                                                                   "learner's facts; null in a global search")
    length_prior = serializers.FloatField(allow_null=True, required=False,
                                          help_text=f"ln(the fact's words) / ln(the learner's average), added x "
                                                    f"{conf.SEARCH_W_LENGTH} to the score; null in a global search")


class SearchHitSerializer(serializers.Serializer):
    fact_id = serializers.UUIDField()
    learner = serializers.UUIDField()
    fact_type = serializers.ChoiceField(choices=FACT_TYPES)
    content = serializers.CharField()
    source = SearchSourceSerializer()
    created_at = serializers.DateTimeField()
    last_accessed_at = serializers.DateTimeField()
    tier = serializers.CharField()
    archived = serializers.BooleanField()
    surprise = serializers.BooleanField()
    superseded_by = serializers.UUIDField(allow_null=True)
    confidence = serializers.FloatField()
    occurred_at = serializers.DateTimeField(allow_null=True, help_text="when it was said (batch ingest)")
    external_id = serializers.CharField(help_text="the client's own id for the fact (batch ingest)")
    metadata = serializers.DictField(help_text="the client's labels (batch ingest)")
    score = serializers.FloatField()
    parts = SearchPartsSerializer()


class SearchOutputSerializer(serializers.Serializer):
    results = SearchHitSerializer(many=True)


class ContextOutputSerializer(serializers.Serializer):
    context = serializers.CharField(help_text="the fenced memory block the coach's specialists get (may be empty)")


class ForgetOutputSerializer(serializers.Serializer):
    deleted = serializers.DictField(child=serializers.IntegerField(), help_text="rows deleted per kind")
