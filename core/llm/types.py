"""Value types shared by every provider. No Django imports here: core.llm imports no app."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object

    def as_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class ChatResult:
    text: str
    parsed: Any = None  # the schema-valid object when a `schema` was given
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"
    provider: str = ""
    request_model: str = ""
    response_model: str = ""
    duration_s: float = 0.0
    time_to_first_token_s: float | None = None
    call_id: str = ""  # telemetry id of this call (set by the recorder when one is registered)
    queued_s: float | None = None  # time spent waiting for an in-process model (llama.cpp lock)


class ChatStream:
    """Iterate to receive text tokens; `.result` holds the ChatResult once iteration finished.

    Stopping early (break, `close()`, or dropping the stream) records the call as `cancelled`."""

    def __init__(self, tokens: Iterator[str]):
        self._tokens = tokens
        self.result: ChatResult | None = None
        self.call_id: str = ""  # telemetry id of the attempt that is streaming (set once it starts)

    def __iter__(self) -> Iterator[str]:
        return self._tokens

    def close(self) -> None:
        """Abandon the stream: frees the model and records the call as cancelled."""
        close = getattr(self._tokens, "close", None)
        if close is not None:
            close()

    def collect(self) -> ChatResult:
        """Drain the stream and return the final result (convenience for callers that need both)."""
        for _ in self._tokens:
            pass
        assert self.result is not None
        return self.result


@dataclass(frozen=True)
class EntitySpan:
    start: int  # character offsets into the source text; text == source[start:end]
    end: int
    text: str
    label: str
    score: float


# --- typed errors -------------------------------------------------------------------------------
class LLMError(Exception):
    """Base of every model-layer error. `transient` errors are retried with backoff.

    `transient` may be overridden per instance (e.g. a missing model file is "unavailable" but
    retrying cannot help)."""

    status = "error"
    transient = False

    def __init__(self, message: str = "", *, transient: bool | None = None, retry_after: float | None = None):
        super().__init__(message)
        if transient is not None:
            self.transient = transient
        # Seconds after which trying again makes sense (circuit breaker cool-down, HTTP Retry-After).
        self.retry_after = retry_after


class LLMUnavailable(LLMError):
    """Provider unreachable (connection refused, model file missing, server down)."""

    transient = True


class LLMTimeout(LLMError):
    status = "timeout"
    transient = True


class LLMOverloaded(LLMError):
    """Provider says it is busy (HTTP 429/503) or the circuit breaker is open."""

    transient = True


class LLMInvalidOutput(LLMError):
    """The model answered but not in the requested shape (schema, JSON, tool call)."""

    status = "parse_error"
