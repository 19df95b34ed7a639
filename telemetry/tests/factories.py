from __future__ import annotations

import time
import uuid

from core.llm.context import CallContext
from core.llm.observers import CallRecord
from telemetry.services import telemetry_record_call


def make_record(**overrides) -> CallRecord:
    ctx_fields = {k: overrides.pop(k) for k in list(overrides) if k in CallContext.__dataclass_fields__}
    base = {"call_id": uuid.uuid4().hex, "operation": "chat", "provider": "llamacpp",
            "request_model": "qwen", "context": CallContext(**{"trace_id": "t-default", **ctx_fields}),
            "started_at": time.time(), "response_model": "qwen", "input_tokens": 10, "output_tokens": 5,
            "duration_s": 0.1, "status": "ok", "prompt": [{"role": "user", "content": "hello"}],
            "response": "hi there"}
    base.update(overrides)
    return CallRecord(**base)


def make_call(**overrides):
    return telemetry_record_call(record=make_record(**overrides))
