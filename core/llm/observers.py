"""Observers are told about every model call. telemetry registers its recorder in
AppConfig.ready(); core.llm knows nothing about Django.

An observer failing must never break the call: errors are logged and swallowed here."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.llm.context import CallContext

logger = logging.getLogger(__name__)


@dataclass
class CallRecord:
    call_id: str
    operation: str  # chat, embeddings, entities, judge, ...
    provider: str
    request_model: str
    context: CallContext
    started_at: float  # time.time()
    response_model: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    duration_s: float | None = None
    time_to_first_token_s: float | None = None
    status: str = "ok"  # ok, error, timeout, parse_error, cancelled
    error_type: str = ""
    error_message: str = ""
    finish_reason: str = ""
    prompt: Any = None  # messages / inputs; stored only when the recorder's setting allows
    response: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


class CallObserver(Protocol):
    def on_start(self, record: CallRecord) -> None: ...
    def on_end(self, record: CallRecord) -> None: ...


_observers: list[CallObserver] = []


def register_observer(observer: CallObserver) -> None:
    if observer not in _observers:
        _observers.append(observer)


def unregister_observer(observer: CallObserver) -> None:
    if observer in _observers:
        _observers.remove(observer)


def notify(event: str, record: CallRecord) -> None:
    for observer in list(_observers):
        try:
            getattr(observer, event)(record)
        except Exception:  # recording never breaks a call
            logger.exception("llm observer %r failed on %s", observer, event)
