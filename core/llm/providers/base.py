"""What a provider implements. Providers raise only `core.llm.types` errors; the facade adds
retries, the circuit breaker and recording on top, so providers stay small."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.llm.types import ChatResult, EntitySpan, ToolSpec


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[ToolSpec] | None = None
    schema: dict | None = None
    options: dict[str, Any] = field(default_factory=dict)
    timeout: float = 120.0
    # Asked between generated pieces; raising there stops the generation (background calls
    # yield to learners' turns, see core.llm.priority). None for interactive calls.
    interrupt: Callable[[], None] | None = None


@dataclass
class Token:
    """A stream event carrying generated text."""

    text: str


@dataclass
class Done:
    """The last stream event: the full result (text, usage, finish reason, parsed/tool calls)."""

    result: ChatResult


class ChatProvider(Protocol):
    name: str

    def chat(self, request: ChatRequest) -> ChatResult: ...

    def stream(self, request: ChatRequest) -> Iterator[Token | Done]: ...

    def health(self, model: str) -> tuple[bool, str]: ...


class EmbeddingProvider(Protocol):
    name: str

    def embed(self, model: str, texts: list[str], *, timeout: float,
              query: bool = False) -> tuple[list[list[float]], int | None]:
        """Vectors, and the input token count when the backend reports one. `query`: the texts are
        search queries, whose vectors only rank stored ones and are never stored; a backend may
        then use a faster approximation (MiniLM's int8 graph). Others ignore it."""
        ...

    def health(self, model: str) -> tuple[bool, str]: ...


class EntityProvider(Protocol):
    name: str

    def predict(self, model: str, text: str, labels: list[str],
                threshold: float | None) -> tuple[list[EntitySpan], int]:
        """Spans that are exact substrings at their offsets, and how many were dropped as not."""
        ...

    def predict_many(self, model: str, texts: list[str], labels: list[str],
                     threshold: float | None) -> list[tuple[list[EntitySpan], int]]:
        """`predict` for many texts in one batched call, results in input order."""
        ...

    def health(self, model: str) -> tuple[bool, str]: ...
