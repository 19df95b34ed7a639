"""Placeholder: the model-layer issue (#3) implements providers behind these signatures."""

from __future__ import annotations

from typing import Any

from bloom.llm.types import ChatResult, ChatStream, EntitySpan, ToolSpec


def chat(messages: list[dict[str, Any]], *, tools: list[ToolSpec] | None = None, schema: dict | None = None,
         stream: bool = False, options: dict[str, Any] | None = None, model: str | None = None,
         operation: str = "chat") -> ChatResult | ChatStream:
    raise NotImplementedError


def embed(texts: list[str]) -> list[list[float]]:
    raise NotImplementedError


def entities(text: str, labels: list[str], *, threshold: float = 0.5) -> list[EntitySpan]:
    raise NotImplementedError


def health() -> dict[str, tuple[bool, str]]:
    return {"llm": (False, "not implemented"), "embeddings": (False, "not implemented"),
            "entities": (False, "not implemented")}
