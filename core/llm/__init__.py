"""The model layer: one small interface per kind of model, providers behind it, and observers
(telemetry) told about every call. Imports no Django app.

Public API (stable; callers use only these):
    chat(messages, *, tools=None, schema=None, stream=False, options=None, model=None,
         operation="chat") -> ChatResult | ChatStream
    embed(texts) -> list[list[float]]                 # batched, 384-d with MiniLM
    entities(text, labels, *, threshold=0.5) -> list[EntitySpan]
    entities_many(texts, labels, *, threshold=0.5) -> list[list[EntitySpan]]   # one batched call
    entity_model_ready() -> bool                       # False while `make run` still trains it
    health() -> dict[str, tuple[bool, str]]            # part -> (ok, reason)
    job_model(job) -> str                              # "provider:model" of chat/extraction/summary/judge
    call_context(...) / current_context() / new_trace_id()
    register_observer(observer)
"""

from core.llm.context import CallContext, call_context, current_context, new_trace_id
from core.llm.facade import chat, embed, entities, entities_many, entity_model_ready, health, job_model
from core.llm.observers import CallRecord, register_observer, unregister_observer
from core.llm.types import (
    ChatResult,
    ChatStream,
    EntitySpan,
    LLMError,
    LLMInvalidOutput,
    LLMOverloaded,
    LLMTimeout,
    LLMUnavailable,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "CallContext", "CallRecord", "ChatResult", "ChatStream", "EntitySpan", "LLMError",
    "LLMInvalidOutput", "LLMOverloaded", "LLMTimeout", "LLMUnavailable", "ToolCall", "ToolSpec",
    "Usage", "call_context", "chat", "current_context", "embed", "entities", "entities_many", "entity_model_ready",
    "health",
    "job_model", "new_trace_id", "register_observer", "unregister_observer",
]
