"""FAKE providers for unit tests of parsing and control flow only. Nothing here runs a model.

`ScriptedFakeChat` replays a queue of scripted results/errors that tests push; behaviour that
depends on a real model must be tested against llama.cpp (or the fake Ollama *server*, which is
backed by llama.cpp)."""

from __future__ import annotations

import hashlib
import math
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from core.llm.providers.base import ChatRequest, Done, Token
from core.llm.providers.common import parse_json_output, parse_tool_output
from core.llm.types import ChatResult, LLMError, Usage


@dataclass
class Scripted:
    """One scripted answer. `text` is what the fake "model" says (JSON when a schema/tools apply)."""

    text: str = ""
    tokens: list[str] | None = None  # how the stream splits `text`; default: by whitespace
    input_tokens: int = 10
    output_tokens: int | None = None
    finish_reason: str = "stop"
    raise_after_tokens: LLMError | None = None  # fail mid-stream after yielding the tokens
    extra: dict = field(default_factory=dict)


class ScriptedFakeChat:
    """A FAKE chat provider: `push(...)` results or exceptions; each call pops the next one."""

    name = "fake"

    def __init__(self) -> None:
        self._queue: deque[Scripted | BaseException] = deque()
        self._lock = threading.Lock()
        self.default: Callable[[ChatRequest], Scripted] | None = None
        self.requests: list[ChatRequest] = []
        # Models with a queue of their own ("fake:reader" beside "fake:scripted"): a test scripts
        # one job's answers without the other job's calls taking them. Empty: an error.
        self._separate: dict[str, deque[Scripted | BaseException]] = {}

    def push(self, *items: Scripted | str | BaseException) -> None:
        with self._lock:
            for item in items:
                self._queue.append(Scripted(text=item) if isinstance(item, str) else item)

    def separate(self, model: str) -> None:
        """Give `model` a queue of its own (empty until `push_to`)."""
        with self._lock:
            self._separate.setdefault(model, deque())

    def push_to(self, model: str, *items: Scripted | str | BaseException) -> None:
        with self._lock:
            queue = self._separate.setdefault(model, deque())
            for item in items:
                queue.append(Scripted(text=item) if isinstance(item, str) else item)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._separate.clear()
            self.requests.clear()
            self.default = None

    def pending(self) -> int:
        return len(self._queue)

    def _next(self, request: ChatRequest) -> Scripted:
        with self._lock:
            self.requests.append(request)
            if request.model in self._separate:
                queue = self._separate[request.model]
                if not queue:
                    raise LLMError(f"ScriptedFakeChat: nothing scripted for {request.model!r}", transient=False)
                item = queue.popleft()
                if isinstance(item, BaseException):
                    raise item
                return item
            item = self._queue.popleft() if self._queue else None
        if item is None:
            if self.default is not None:
                return self.default(request)
            raise LLMError("ScriptedFakeChat: no scripted result queued (push one in the test)", transient=False)
        if isinstance(item, BaseException):
            raise item
        return item

    def _result(self, request: ChatRequest, item: Scripted) -> ChatResult:
        text, parsed, tool_calls, finish = item.text, None, [], item.finish_reason
        if request.tools:
            text, tool_calls = parse_tool_output(item.text, request.tools)
            if tool_calls:
                finish = "tool_calls"
        elif request.schema is not None:
            parsed = parse_json_output(item.text, request.schema)
        output = item.output_tokens if item.output_tokens is not None else len(item.text.split())
        return ChatResult(text=text, parsed=parsed, tool_calls=tool_calls,
                          usage=Usage(input_tokens=item.input_tokens, output_tokens=output),
                          finish_reason=finish, provider=self.name, request_model=request.model,
                          response_model=request.model)

    def chat(self, request: ChatRequest) -> ChatResult:
        item = self._next(request)
        if request.interrupt is not None:  # like the real providers: asked between pieces
            for _ in item.tokens if item.tokens is not None else item.text.split():
                request.interrupt()
        return self._result(request, item)

    def stream(self, request: ChatRequest) -> Iterator[Token | Done]:
        item = self._next(request)
        tokens = item.tokens if item.tokens is not None else [w + " " for w in item.text.split()]
        for token in tokens:
            yield Token(token)
        if item.raise_after_tokens is not None:
            raise item.raise_after_tokens
        yield Done(self._result(request, item))

    def health(self, model: str) -> tuple[bool, str]:
        return True, "scripted fake chat (tests only)"


class HashingFakeEmbeddings:
    """A FAKE embedding provider: deterministic unit vectors from hashed words (no semantics
    beyond shared words). For control-flow tests only; similarity tests use MiniLM."""

    name = "fake"
    dim = 384

    def embed(self, model: str, texts: list[str], *, timeout: float,
              query: bool = False) -> tuple[list[list[float]], int | None]:
        vectors = []
        for text in texts:
            vec = [0.0] * self.dim
            for word in text.lower().split():
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
                vec[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            vectors.append([v / norm for v in vec])
        return vectors, sum(len(t.split()) for t in texts)

    def health(self, model: str) -> tuple[bool, str]:
        return True, "hashing fake embeddings (tests only)"
