"""Providers: one small adapter per backend. The facade picks one from settings (or a per-call
`model="provider:name"`); nothing outside this package knows which backend is in use."""

from __future__ import annotations

import threading

from core.llm.providers.base import ChatProvider, EmbeddingProvider, EntityProvider

_lock = threading.Lock()
_chat: dict[str, ChatProvider] = {}
_embedding: dict[str, EmbeddingProvider] = {}
_entity: dict[str, EntityProvider] = {}


def chat_provider(name: str) -> ChatProvider:
    with _lock:
        if name not in _chat:
            if name == "llamacpp":
                from core.llm.providers.llamacpp import LlamaCppChat

                _chat[name] = LlamaCppChat()
            elif name == "ollama":
                from core.llm.providers.ollama import OllamaChat

                _chat[name] = OllamaChat()
            elif name == "openai":
                from core.llm.providers.openai_compat import OpenAICompatChat

                _chat[name] = OpenAICompatChat()
            elif name == "fake":
                from core.llm.providers.fake import ScriptedFakeChat

                _chat[name] = ScriptedFakeChat()
            else:
                raise ValueError(f"unknown chat provider {name!r} (expected openai, llamacpp, ollama or fake)")
        return _chat[name]


def embedding_provider(name: str) -> EmbeddingProvider:
    with _lock:
        if name not in _embedding:
            if name == "minilm":
                from core.llm.providers.minilm import MiniLMEmbeddings

                _embedding[name] = MiniLMEmbeddings()
            elif name == "ollama":
                from core.llm.providers.ollama import OllamaEmbeddings

                _embedding[name] = OllamaEmbeddings()
            elif name == "fake":
                from core.llm.providers.fake import HashingFakeEmbeddings

                _embedding[name] = HashingFakeEmbeddings()
            else:
                raise ValueError(f"unknown embeddings provider {name!r} (expected minilm, ollama or fake)")
        return _embedding[name]


def entity_provider(name: str = "gliner") -> EntityProvider:
    with _lock:
        if name not in _entity:
            from core.llm.providers.gliner import GLiNEREntities

            _entity[name] = GLiNEREntities()
        return _entity[name]


def fake_chat() -> ScriptedFakeChat:  # noqa: F821 - imported lazily for the annotation
    """The process-wide scripted fake (for unit tests of parsing/control flow)."""
    return chat_provider("fake")  # type: ignore[return-value]
