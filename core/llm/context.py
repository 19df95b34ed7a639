"""Per-call attribution (trace, learner, agent, loop index) carried in a context variable, so the
recorder can attribute every call without callers passing ids through every layer."""

from __future__ import annotations

import contextlib
import contextvars
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class CallContext:
    trace_id: str = ""
    parent_call_id: str = ""
    conversation_id: int | None = None
    learner_id: int | None = None
    agent: str = ""
    loop_iteration: int | None = None
    service: str = ""  # the calling service, e.g. "coaching.turn" or "memory.extract_facts"
    # "background" calls yield the model to learners' turns (core.llm.priority).
    priority: str = "interactive"


_current: contextvars.ContextVar[CallContext] = contextvars.ContextVar("bloom_llm_call_context", default=CallContext())  # noqa: B039 - frozen, immutable


def current_context() -> CallContext:
    return _current.get()


def new_trace_id() -> str:
    return uuid.uuid4().hex


@contextlib.contextmanager
def call_context(**changes) -> Iterator[CallContext]:
    """Layer attribution on top of the current context for the duration of the block."""
    base = _current.get()
    ctx = replace(base, **changes)
    if not ctx.trace_id:
        ctx = replace(ctx, trace_id=new_trace_id())
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)
