"""One row per model call (chat, embeddings, entities, judge, …). Column names follow the
OpenTelemetry GenAI semantic conventions (gen_ai.operation.name → operation, gen_ai.usage.* →
input/output_tokens, error.type → error_type, …); the loop index has no standard name
(`bloom.loop_iteration`).

learner_id / conversation_id are plain integers, not foreign keys: telemetry sits left of
coaching in the import order, and must survive (anonymised) when a learner is erased."""

from __future__ import annotations

from django.db import models


class ModelCall(models.Model):
    class Status(models.TextChoices):
        OK = "ok"
        ERROR = "error"
        TIMEOUT = "timeout"
        PARSE_ERROR = "parse_error"
        CANCELLED = "cancelled"
        # A background generation that stepped aside for a learner's turn (core.llm.priority).
        PREEMPTED = "preempted"

    call_id = models.CharField(max_length=32, unique=True)  # uuid4 hex from core.llm
    trace_id = models.CharField(max_length=64, blank=True, db_index=True)
    parent_call_id = models.CharField(max_length=32, blank=True, db_index=True)

    operation = models.CharField(max_length=40)  # gen_ai.operation.name (+ "entities", "judge")
    provider = models.CharField(max_length=40)  # gen_ai.provider.name
    request_model = models.CharField(max_length=200)  # gen_ai.request.model
    response_model = models.CharField(max_length=200, blank=True)  # gen_ai.response.model
    input_tokens = models.PositiveIntegerField(null=True, blank=True)  # gen_ai.usage.input_tokens
    output_tokens = models.PositiveIntegerField(null=True, blank=True)  # gen_ai.usage.output_tokens
    duration_ms = models.FloatField(null=True, blank=True)  # gen_ai.client.operation.duration
    time_to_first_token_ms = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OK)
    error_type = models.CharField(max_length=100, blank=True)  # error.type
    error_message = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)  # gen_ai.response.finish_reasons
    attempt = models.PositiveSmallIntegerField(default=0)  # 0 first try, 1.. retries

    conversation_id = models.BigIntegerField(null=True, blank=True)  # gen_ai.conversation.id
    learner_id = models.BigIntegerField(null=True, blank=True)
    agent = models.CharField(max_length=100, blank=True)
    loop_iteration = models.PositiveIntegerField(null=True, blank=True)  # bloom.loop_iteration
    service = models.CharField(max_length=100, blank=True)

    prompt_content = models.TextField(blank=True)  # only when BLOOM_TELEMETRY_CONTENT
    response_content = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True)

    created_at = models.DateTimeField(db_index=True)  # when the call started

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [
            models.Index(fields=["operation", "created_at"], name="telemetry_op_created_idx"),
            models.Index(fields=["request_model", "created_at"], name="telemetry_model_created_idx"),
            models.Index(fields=["status", "created_at"], name="telemetry_status_created_idx"),
            models.Index(fields=["learner_id", "created_at"], name="telemetry_learner_created_idx"),
        ]
        permissions = [("reset_telemetry", "Can delete all telemetry rows (reset)")]

    def __str__(self) -> str:
        return f"{self.operation} {self.provider}:{self.request_model} [{self.status}] {self.call_id[:8]}"
