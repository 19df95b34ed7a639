"""Value types shared by every provider. No Django imports here: bloom.llm imports no app."""

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


class ChatStream:
    """Iterate to receive text tokens; `.result` holds the ChatResult once iteration finished."""

    def __init__(self, tokens: Iterator[str]):
        self._tokens = tokens
        self.result: ChatResult | None = None

    def __iter__(self) -> Iterator[str]:
        return self._tokens


@dataclass(frozen=True)
class EntitySpan:
    start: int  # character offsets into the source text; text == source[start:end]
    end: int
    text: str
    label: str
    score: float


# --- typed errors -------------------------------------------------------------------------------
class LLMError(Exception):
    """Base of every model-layer error. `transient` errors are retried with backoff."""

    status = "error"
    transient = False


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
