"""Writes to telemetry. Recording a call runs in its own savepoint so a failed INSERT cannot
poison the caller's transaction on PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from core.errors import ApplicationError
from core.llm.observers import CallRecord
from telemetry.models import ModelCall

RESET_CONFIRMATION = "DELETE"


def _content(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    limit = int(settings.BLOOM_TELEMETRY_CONTENT_MAX)
    return text if len(text) <= limit else text[:limit] + "…[truncated]"


def _model_call(record: CallRecord) -> ModelCall:
    ctx = record.context
    store_content = bool(settings.BLOOM_TELEMETRY_CONTENT)
    extra = {k: v for k, v in record.extra.items() if k != "attempt"}
    return ModelCall(
        call_id=record.call_id,
        trace_id=ctx.trace_id or "",
        parent_call_id=ctx.parent_call_id or "",
        operation=record.operation[:40],
        provider=record.provider[:40],
        request_model=record.request_model[:200],
        response_model=(record.response_model or "")[:200],
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        duration_ms=None if record.duration_s is None else record.duration_s * 1000.0,
        time_to_first_token_ms=(None if record.time_to_first_token_s is None
                                else record.time_to_first_token_s * 1000.0),
        status=record.status,
        error_type=record.error_type[:100],
        error_message=record.error_message[:4000],
        finish_reason=(record.finish_reason or "")[:40],
        attempt=int(record.extra.get("attempt", 0)),
        conversation_id=ctx.conversation_id,
        learner_id=ctx.learner_id,
        agent=ctx.agent[:100],
        loop_iteration=ctx.loop_iteration,
        service=ctx.service[:100],
        prompt_content=_content(record.prompt) if store_content else "",
        response_content=_content(record.response) if store_content else "",
        extra=json.loads(json.dumps(extra, default=str)),
        created_at=datetime.fromtimestamp(record.started_at, tz=UTC),
    )


def _relaxed_durability() -> None:
    """A telemetry row is worth less than a flush to disk on the call path: on PostgreSQL, when
    this is our own transaction (not the caller's), commit without waiting for the WAL flush.
    A crash can lose the last fraction of a second of rows, never corrupt anything. Inside a
    caller's transaction we must not touch it: SET LOCAL would relax *their* commit too."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


def telemetry_record_call(*, record: CallRecord) -> ModelCall:
    row = _model_call(record)
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            _relaxed_durability()
        row.save(force_insert=True)
    return row


def telemetry_record_calls(*, records: list[CallRecord], batch_size: int = 1000) -> int:
    """Bulk ingest (replays, imports, the ingest benchmark)."""
    rows = [_model_call(r) for r in records]
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            _relaxed_durability()
        ModelCall.objects.bulk_create(rows, batch_size=batch_size)
    return len(rows)


def telemetry_reset(*, confirm: str) -> int:
    """Delete every telemetry row. `confirm` must be exactly "DELETE"; returns the row count."""
    if confirm != RESET_CONFIRMATION:
        raise ApplicationError(f'reset needs confirm="{RESET_CONFIRMATION}"', code="confirmation_required",
                               field="confirm")
    with transaction.atomic():
        deleted, _ = ModelCall.objects.all().delete()
    return deleted


def telemetry_anonymise_learner(*, learner_id: int) -> int:
    """Erasure: unlink a learner's calls (and drop their stored content); returns rows changed."""
    with transaction.atomic():
        return ModelCall.objects.filter(learner_id=learner_id).update(
            learner_id=None, conversation_id=None, prompt_content="", response_content="")
