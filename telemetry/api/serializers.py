from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from telemetry.models import ModelCall


class ModelCallOutput(serializers.ModelSerializer):
    """The row stores the learner's and the conversation's integer keys (telemetry has no foreign
    keys); the response names them by their public ids, looked up for a whole page at once
    (`telemetry.api.views.public_refs`, passed as the `refs` context)."""

    learner = serializers.SerializerMethodField(help_text="the learner's id (UUID)")
    conversation = serializers.SerializerMethodField(help_text="the conversation's id (UUID)")

    class Meta:
        model = ModelCall
        fields = ("call_id", "trace_id", "parent_call_id", "operation", "provider", "request_model",
                  "response_model", "input_tokens", "output_tokens", "duration_ms", "time_to_first_token_ms",
                  "status", "error_type", "error_message", "finish_reason", "attempt", "conversation",
                  "learner", "agent", "loop_iteration", "service", "prompt_content", "response_content",
                  "extra", "created_at")

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_learner(self, call: ModelCall):
        return self.context["refs"]["learners"].get(call.learner_id)

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_conversation(self, call: ModelCall):
        return self.context["refs"]["conversations"].get(call.conversation_id)


class CallFilterInput(serializers.Serializer):
    operation = serializers.CharField(required=False, max_length=40)
    model = serializers.CharField(required=False, max_length=200)
    status = serializers.ChoiceField(required=False, choices=ModelCall.Status.choices)
    learner = serializers.CharField(required=False, max_length=64, help_text="the learner's id (UUID)")
    trace = serializers.CharField(required=False, max_length=64)
    agent = serializers.CharField(required=False, max_length=100)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)

    def validate(self, attrs):
        if attrs.get("since") and attrs.get("until") and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError({"until": "until must be after since"})
        return attrs


class AggregateOutput(serializers.Serializer):
    request_model = serializers.CharField()
    operation = serializers.CharField()
    count = serializers.IntegerField()
    errors = serializers.IntegerField()
    error_rate = serializers.FloatField()
    p50_ms = serializers.FloatField(allow_null=True)
    p95_ms = serializers.FloatField(allow_null=True)
    p99_ms = serializers.FloatField(allow_null=True)
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()


class ResetInput(serializers.Serializer):
    confirm = serializers.CharField(help_text='must be exactly "DELETE"')


class TraceCallOutput(ModelCallOutput):
    children = serializers.SerializerMethodField()

    class Meta(ModelCallOutput.Meta):
        fields = (*ModelCallOutput.Meta.fields, "children")

    @extend_schema_field({"type": "array", "items": {"$ref": "#/components/schemas/TraceCallOutput"}})
    def get_children(self, obj):  # pragma: no cover - schema only; the view builds the tree
        return []


class TraceOutput(serializers.Serializer):
    trace_id = serializers.CharField()
    count = serializers.IntegerField()
    calls = TraceCallOutput(many=True, help_text="root calls; each has its children")


class WindowInput(serializers.Serializer):
    window = serializers.CharField(required=False, default="24h", help_text="30m, 24h, 7d …")


class AggregatesOutput(serializers.Serializer):
    window = serializers.CharField()
    groups = AggregateOutput(many=True)


class ResetOutput(serializers.Serializer):
    deleted = serializers.IntegerField()
