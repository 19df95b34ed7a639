"""In-process llama.cpp. One `Llama` per model file, loaded once; a lock per model because a
llama.cpp context is not safe to use from two threads at once (requests queue on the lock).

Generation always streams internally: that gives time to first token for every call and lets a
call stop at the timeout between tokens (prompt evaluation itself cannot be interrupted)."""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.llm import assets, grammar_sampling
from core.llm.grammars import PLAIN_TEXT_GBNF
from core.llm.providers.base import ChatRequest, Done, Token
from core.llm.providers.common import grammar_request, result_of, structured_events
from core.llm.settings import llm_setting
from core.llm.types import ChatResult, LLMError, LLMOverloaded, LLMTimeout, LLMUnavailable, Usage


class FairLock:
    """A lock that hands the model out in arrival order. `threading.Lock` promises no order, and
    with thirty turns queued an unlucky one could keep losing the race until its wait bound ran
    out while later arrivals were served."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[object] = deque()
        self._held = False

    def acquire(self, timeout: float | None = None) -> bool:
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            if self._cond.wait_for(lambda: not self._held and self._queue[0] is ticket, timeout):
                self._queue.popleft()
                self._held = True
                return True
            self._queue.remove(ticket)
            self._cond.notify_all()  # the head may have changed
            return False

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def waiting(self) -> int:
        return len(self._queue)

    def __enter__(self) -> FairLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_load_lock = threading.Lock()
_models: dict[str, tuple[Any, FairLock]] = {}


@atexit.register
def _close_models() -> None:
    # Free llama.cpp explicitly while the interpreter is intact; its __del__ at shutdown is noisy.
    with _load_lock:
        for llm, _lock in _models.values():
            with contextlib.suppress(Exception):  # best effort at exit
                llm.close()
        _models.clear()


def model_path(model: str) -> Path:
    return assets.chat_model_path(model)


def load_model(model: str) -> tuple[Any, FairLock]:
    path = model_path(model)
    key = str(path)
    with _load_lock:
        if key in _models:
            return _models[key]
        if not path.is_file():
            raise LLMUnavailable(
                f"chat model file {path} is missing: run `python manage.py bloom_models` "
                f"(or set BLOOM_LLM to another model)", transient=False)
        try:
            from llama_cpp import Llama

            grammar_sampling.install()
            llm = Llama(model_path=key, n_ctx=int(llm_setting("BLOOM_LLM_CONTEXT", 4096)),
                        n_threads=int(llm_setting("BLOOM_LLM_THREADS", 2)), verbose=False)
        except Exception as exc:  # llama.cpp raises ValueError/RuntimeError for bad files
            raise LLMUnavailable(f"could not load chat model {path}: {exc}", transient=False) from None
        _models[key] = (llm, FairLock())
        return _models[key]


def _sampling(options: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"max_tokens": int(options.get("max_tokens", 512))}
    for name in ("temperature", "top_p", "top_k", "seed", "stop", "repeat_penalty"):
        if options.get(name) is not None:
            kwargs[name] = options[name]
    if options.get("plain_text"):
        from llama_cpp import LlamaGrammar

        kwargs["grammar"] = LlamaGrammar.from_string(PLAIN_TEXT_GBNF)
    return kwargs


class LlamaCppChat:
    name = "llamacpp"

    def stream(self, request: ChatRequest) -> Iterator[Token | Done]:
        llm, lock = load_model(request.model)
        messages, schema = grammar_request(request)
        kwargs = _sampling(request.options)
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        # Structured output is parsed as a whole; streaming JSON fragments to a reader is useless.
        yield_tokens = not request.tools and request.schema is None
        parts: list[str] = []
        finish = "stop"
        first_piece_s: float | None = None
        # Requests queue on the model's lock. The wait is bounded on its own (BLOOM_LLM_QUEUE_TIMEOUT)
        # and does not eat into the generation timeout: under load a turn may queue behind others
        # for a while and must then still get its full generation time. A full queue is "busy", not
        # "broken": not transient (retrying would only queue again), and the breaker stays closed.
        queue_timeout = float(llm_setting("BLOOM_LLM_QUEUE_TIMEOUT", 180.0))
        queued_from = time.monotonic()
        if not lock.acquire(timeout=queue_timeout):
            raise LLMOverloaded(f"the local model is busy: no turn free within {queue_timeout:.0f}s",
                                transient=False, retry_after=10)
        queued_s = time.monotonic() - queued_from
        started = time.monotonic()
        try:
            try:
                chunks = llm.create_chat_completion(messages=messages, stream=True, **kwargs)
            except ValueError as exc:  # e.g. prompt longer than the context window
                raise LLMError(f"llama.cpp rejected the request: {exc}") from None
            try:
                for chunk in chunks:
                    choice = chunk["choices"][0]
                    piece = choice.get("delta", {}).get("content")
                    if piece:
                        if first_piece_s is None:
                            first_piece_s = time.monotonic() - started
                        parts.append(piece)
                        if yield_tokens:
                            yield Token(piece)
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
                    if time.monotonic() - started > request.timeout:
                        raise LLMTimeout(f"llama.cpp generation exceeded {request.timeout:.0f}s")
                    if request.interrupt is not None:
                        request.interrupt()
            except ValueError as exc:
                raise LLMError(f"llama.cpp failed: {exc}") from None
            finally:
                close = getattr(chunks, "close", None)
                if close:
                    close()
            text = "".join(parts)
            # No usage in llama.cpp streams: the context holds prompt + completion tokens.
            output_tokens = len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0
            input_tokens = max(int(llm.n_tokens) - output_tokens, 0)
        finally:
            lock.release()
        result = ChatResult(text=text, usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
                            finish_reason=finish, provider=self.name, request_model=request.model,
                            response_model=Path(model_path(request.model)).stem,
                            time_to_first_token_s=first_piece_s, queued_s=queued_s)
        yield from structured_events(result, text, request)

    def chat(self, request: ChatRequest) -> ChatResult:
        return result_of(self.stream(request), "llama.cpp")

    def health(self, model: str) -> tuple[bool, str]:
        path = model_path(model)
        if not path.is_file():
            return False, f"chat model file {path} is missing: run `python manage.py bloom_models`"
        try:
            load_model(model)
        except LLMError as exc:
            return False, str(exc)
        return True, f"llama.cpp in-process, {path.name}"
