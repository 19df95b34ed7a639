"""Ollama over HTTP with the official client: streaming, `format` with a JSON schema, native tool
calls, `keep_alive`, token counts from `prompt_eval_count` / `eval_count`.

Error mapping (what the facade retries is decided by the error type, not here):
refused connection -> LLMUnavailable; timeout -> LLMTimeout; 429/503 -> LLMOverloaded;
404 (model not pulled) -> LLMUnavailable, not transient; other 5xx -> LLMUnavailable; 4xx -> LLMError."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

from core.llm.providers.base import ChatRequest, Done, Token
from core.llm.providers.common import check_tool_call, parse_json_output
from core.llm.settings import llm_setting
from core.llm.types import ChatResult, LLMError, LLMInvalidOutput, LLMOverloaded, LLMTimeout, LLMUnavailable, Usage

_clients: dict[tuple[str, float], Any] = {}
_clients_lock = threading.Lock()

OPTION_NAMES = ("temperature", "top_p", "top_k", "seed", "stop", "repeat_penalty", "num_ctx")


def client(timeout: float):
    import ollama

    host = str(llm_setting("OLLAMA_HOST", "http://127.0.0.1:11434"))
    key = (host, float(timeout))
    with _clients_lock:
        if key not in _clients:
            _clients[key] = ollama.Client(host=host, timeout=timeout)
        return _clients[key]


@contextlib.contextmanager
def mapped_errors(host_hint: str = ""):
    import httpx
    import ollama

    try:
        yield
    except LLMError:
        raise
    except ollama.ResponseError as exc:
        status = exc.status_code
        message = f"ollama: {exc.error} (HTTP {status})"
        if status in (429, 503):
            raise LLMOverloaded(message) from None
        if status == 404:
            raise LLMUnavailable(message + " — is the model pulled? (`ollama pull <model>`)", transient=False) from None
        if status >= 500:
            raise LLMUnavailable(message) from None
        if status == -1:  # an error reported inside a stream: the server failed mid-answer
            raise LLMUnavailable(message) from None
        raise LLMError(message) from None
    except httpx.TimeoutException as exc:
        raise LLMTimeout(f"ollama timed out{host_hint}: {type(exc).__name__}") from None
    except (ConnectionError, httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError) as exc:
        raise LLMUnavailable(f"ollama unreachable{host_hint}: {exc}") from None


def _messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        m: dict[str, Any] = {"role": message["role"], "content": message.get("content") or ""}
        if message["role"] == "tool" and (message.get("name") or message.get("tool_name")):
            m["tool_name"] = message.get("name") or message.get("tool_name")
        if message.get("tool_calls"):
            m["tool_calls"] = [
                {"function": {"name": c.get("name") or c.get("function", {}).get("name"),
                              "arguments": c.get("arguments") or c.get("function", {}).get("arguments") or {}}}
                for c in message["tool_calls"]]
        out.append(m)
    return out


class OllamaChat:
    name = "ollama"

    def _kwargs(self, request: ChatRequest, stream: bool) -> dict[str, Any]:
        options = {k: request.options[k] for k in OPTION_NAMES if request.options.get(k) is not None}
        if request.options.get("max_tokens") is not None:
            options["num_predict"] = int(request.options["max_tokens"])
        keep_alive = request.options.get("keep_alive", llm_setting("OLLAMA_KEEP_ALIVE", "5m"))
        kwargs: dict[str, Any] = {"model": request.model, "messages": _messages(request.messages),
                                  "stream": stream, "options": options or None, "keep_alive": keep_alive}
        if request.schema is not None:
            kwargs["format"] = request.schema
        if request.tools:
            kwargs["tools"] = [tool.as_openai() for tool in request.tools]
        return kwargs

    def _finish(self, request: ChatRequest, text: str, last: Any, tool_calls_raw: list[Any],
                first_token_s: float | None) -> ChatResult:
        result = ChatResult(
            text=text,
            usage=Usage(input_tokens=int(getattr(last, "prompt_eval_count", 0) or 0),
                        output_tokens=int(getattr(last, "eval_count", 0) or 0)),
            finish_reason=str(getattr(last, "done_reason", "") or "stop"),
            provider=self.name, request_model=request.model,
            response_model=str(getattr(last, "model", "") or request.model),
            time_to_first_token_s=first_token_s,
        )
        if tool_calls_raw:
            result.tool_calls = [
                check_tool_call({"name": c.function.name, "arguments": c.function.arguments}, request.tools or [],
                                index=i)
                for i, c in enumerate(tool_calls_raw)]
            result.finish_reason = "tool_calls"
        elif request.schema is not None:
            result.parsed = parse_json_output(text, request.schema)
        elif request.tools is None and not text and result.finish_reason == "stop":
            raise LLMInvalidOutput("ollama returned an empty answer")
        return result

    def chat(self, request: ChatRequest) -> ChatResult:
        for event in self.stream(request, _yield_tokens=False):
            if isinstance(event, Done):
                return event.result
        raise LLMError("ollama stream ended without a result")  # pragma: no cover

    def stream(self, request: ChatRequest, _yield_tokens: bool = True) -> Iterator[Token | Done]:
        # Always stream from the server: one code path, and time to first token for every call.
        started = time.monotonic()
        parts: list[str] = []
        tool_calls_raw: list[Any] = []
        last = None
        first: float | None = None
        with mapped_errors(f" at {llm_setting('OLLAMA_HOST', '')}"):
            response = client(request.timeout).chat(**self._kwargs(request, stream=True))
            try:
                for part in response:
                    last = part
                    message = part.message
                    if message.tool_calls:
                        tool_calls_raw.extend(message.tool_calls)
                    if message.content:
                        if first is None:
                            first = time.monotonic() - started
                        parts.append(message.content)
                        if _yield_tokens and request.schema is None:
                            yield Token(message.content)
                    if time.monotonic() - started > request.timeout:
                        raise LLMTimeout(f"ollama generation exceeded {request.timeout:.0f}s")
                    if request.interrupt is not None:
                        request.interrupt()  # closing the response stops the server's generation
            finally:
                close = getattr(response, "close", None)
                if close:
                    close()
        if last is None or not getattr(last, "done", False):
            raise LLMUnavailable("ollama stream ended before the answer was done")
        yield Done(self._finish(request, "".join(parts), last, tool_calls_raw, first))

    def health(self, model: str) -> tuple[bool, str]:
        try:
            with mapped_errors():
                names = {m.model for m in client(5.0).list().models}
        except LLMError as exc:
            return False, f"ollama at {llm_setting('OLLAMA_HOST', '')}: {exc}"
        if model not in names and f"{model}:latest" not in names:
            return False, f"ollama is up but model {model!r} is not pulled (`ollama pull {model}`)"
        return True, f"ollama at {llm_setting('OLLAMA_HOST', '')}, {model}"


class OllamaEmbeddings:
    name = "ollama"

    def embed(self, model: str, texts: list[str], *, timeout: float,
              query: bool = False) -> tuple[list[list[float]], int | None]:
        with mapped_errors():
            response = client(timeout).embed(model=model, input=texts)
        vectors = [list(map(float, v)) for v in response.embeddings]
        if len(vectors) != len(texts):
            raise LLMInvalidOutput(f"ollama returned {len(vectors)} embeddings for {len(texts)} texts")
        # Ollama models do not always normalise; cosine search expects unit vectors.
        out = []
        for v in vectors:
            norm = math.sqrt(sum(x * x for x in v))
            out.append([x / norm for x in v] if norm and math.isfinite(norm) else v)
        return out, getattr(response, "prompt_eval_count", None)

    def health(self, model: str) -> tuple[bool, str]:
        return OllamaChat().health(model)
