"""Any OpenAI-compatible chat server over HTTP, with the official `openai` client: Bloom's own
embedded model server (`manage.py model_server`), vLLM, llama.cpp's `llama-server`, LM Studio,
Ollama's `/v1`. One protocol from a laptop to a cluster: scaling the model tier out is a URL.

- Structured output is asked for the standard way (`response_format` of type `json_schema`) and
  checked in code either way; tools go through the same schema as on llama.cpp (every server
  that constrains JSON can then call tools, no server-side tool parser needed).
- Generation always streams: time to first token for every call, the timeout and the yielding of
  background calls are checked between pieces, and closing the stream makes the server stop
  generating (disconnect detection) instead of finishing an answer nobody reads.
- Token counts come from the final usage chunk when the server sends one
  (`stream_options.include_usage`); otherwise output tokens are the number of content pieces
  (one token each on llama.cpp and vLLM) and input tokens stay 0 (unknown).

Error mapping (what the facade retries is decided by the error type, not here):
refused connection / dropped mid-answer -> LLMUnavailable; timeout -> LLMTimeout; 429/503 ->
LLMOverloaded (Retry-After honoured); 404 (no such model) -> LLMUnavailable, not transient;
other 5xx -> LLMUnavailable; other 4xx -> LLMError."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from core.llm.grammars import PLAIN_TEXT_GBNF
from core.llm.providers.base import ChatRequest, Done, Token
from core.llm.providers.common import grammar_request, result_of, structured_events
from core.llm.settings import llm_setting
from core.llm.types import ChatResult, LLMError, LLMOverloaded, LLMTimeout, LLMUnavailable, Usage

_clients: dict[tuple[str, str, float], Any] = {}
_clients_lock = threading.Lock()

# The last generation this process saw succeed, for /healthz: (monotonic time, model, tokens/s).
_last_ok: dict[str, tuple[float, float]] = {}


def base_url() -> str:
    return str(llm_setting("OPENAI_BASE_URL", "http://127.0.0.1:8081/v1")).rstrip("/")


def client(timeout: float):
    import openai

    url, key = base_url(), str(llm_setting("OPENAI_API_KEY", "") or "bloom-local")
    cache_key = (url, key, float(timeout))
    with _clients_lock:
        if cache_key not in _clients:
            # Retries belong to the facade (typed errors, breaker, one telemetry row per attempt).
            _clients[cache_key] = openai.OpenAI(base_url=url, api_key=key, timeout=timeout, max_retries=0)
        return _clients[cache_key]


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    raw = response.headers.get("retry-after") if response is not None else None
    try:
        return float(raw) if raw else None
    except ValueError:
        return None


@contextlib.contextmanager
def mapped_errors():
    import httpx
    import openai

    where = f" at {base_url()}"
    try:
        yield
    except LLMError:
        raise
    except openai.APITimeoutError:
        raise LLMTimeout(f"model server timed out{where}") from None
    except openai.APIConnectionError as exc:
        raise LLMUnavailable(f"model server unreachable{where}: {exc.__cause__ or exc}") from None
    except openai.APIStatusError as exc:
        status = exc.status_code
        message = f"model server{where}: HTTP {status}: {str(exc.message)[:300]}"
        if status in (429, 503):
            raise LLMOverloaded(message, retry_after=_retry_after(exc)) from None
        if status == 404:
            raise LLMUnavailable(message + " (is the model name right? GET /v1/models lists them)",
                                 transient=False) from None
        if status >= 500:
            raise LLMUnavailable(message) from None
        raise LLMError(message) from None
    except httpx.TimeoutException:
        raise LLMTimeout(f"model server timed out{where}") from None
    except (httpx.TransportError, httpx.RemoteProtocolError) as exc:
        # The server went away mid-answer (a crashed model process, a restarted pod).
        raise LLMUnavailable(f"model server dropped the answer{where}: {type(exc).__name__}: {exc}") from None


def _sampling(options: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"max_tokens": int(options.get("max_tokens", 512))}
    for name in ("temperature", "top_p", "seed", "stop"):
        if options.get(name) is not None:
            kwargs[name] = options[name]
    # Not in OpenAI's schema; llama.cpp, vLLM and Ollama read them from the body.
    extra = {name: options[name] for name in ("top_k", "repeat_penalty") if options.get(name) is not None}
    if options.get("plain_text"):
        extra["grammar"] = PLAIN_TEXT_GBNF  # llama.cpp's servers read it (core/llm/grammars.py)
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def last_generation(model: str) -> tuple[float, float] | None:
    """(seconds ago, tokens/s) of the last successful generation with `model` in this process."""
    seen = _last_ok.get(model)
    return (time.monotonic() - seen[0], seen[1]) if seen else None


class OpenAICompatChat:
    name = "openai"

    def stream(self, request: ChatRequest) -> Iterator[Token | Done]:
        messages, schema = grammar_request(request)
        kwargs = _sampling(request.options)
        if schema is not None:
            kwargs["response_format"] = {"type": "json_schema",
                                         "json_schema": {"name": "bloom_output", "schema": schema, "strict": True}}
        yield_tokens = not request.tools and request.schema is None
        # Waiting for the server (queued behind other requests, prompt evaluation) is bounded by
        # the queue timeout plus the generation timeout; after the first piece only generation counts.
        queue_timeout = float(llm_setting("BLOOM_LLM_QUEUE_TIMEOUT", 180.0))
        started = time.monotonic()
        parts: list[str] = []
        pieces = 0
        finish = "stop"
        usage = None
        response_model = request.model
        first_piece_s: float | None = None
        last_piece_s = 0.0
        with mapped_errors():
            response = client(queue_timeout + request.timeout).chat.completions.create(
                model=request.model, messages=messages, stream=True,
                stream_options={"include_usage": True}, **kwargs)
            try:
                for chunk in response:
                    if getattr(chunk, "usage", None):
                        usage = chunk.usage
                    response_model = getattr(chunk, "model", None) or response_model
                    for choice in chunk.choices or []:
                        piece = getattr(choice.delta, "content", None) if choice.delta else None
                        if piece:
                            last_piece_s = time.monotonic() - started
                            if first_piece_s is None:
                                first_piece_s = last_piece_s
                            pieces += 1
                            parts.append(piece)
                            if yield_tokens:
                                yield Token(piece)
                        if choice.finish_reason:
                            finish = choice.finish_reason
                    now, bound = time.monotonic(), queue_timeout + request.timeout
                    if first_piece_s is None and now - started > bound:
                        raise LLMTimeout(f"no answer from the model server within {bound:.0f}s")
                    if first_piece_s is not None and now - started - first_piece_s > request.timeout:
                        raise LLMTimeout(f"generation exceeded {request.timeout:.0f}s")
                    if request.interrupt is not None:
                        request.interrupt()  # raising here closes the stream: the server stops generating
            finally:
                response.close()
        text = "".join(parts)
        if usage is not None:
            tokens = Usage(input_tokens=int(usage.prompt_tokens or 0), output_tokens=int(usage.completion_tokens or 0))
        else:
            tokens = Usage(input_tokens=0, output_tokens=pieces)
        # Decode speed between the first and the last piece (prompt evaluation and queueing excluded).
        decode_s = last_piece_s - (first_piece_s or 0.0)
        _last_ok[request.model] = (time.monotonic(), (pieces - 1) / decode_s if pieces > 1 and decode_s > 0 else 0.0)
        result = ChatResult(text=text, usage=tokens, finish_reason=finish, provider=self.name,
                            request_model=request.model, response_model=str(response_model),
                            time_to_first_token_s=first_piece_s)
        yield from structured_events(result, text, request)

    def chat(self, request: ChatRequest) -> ChatResult:
        return result_of(self.stream(request), "model server")

    def health(self, model: str) -> tuple[bool, str]:
        """Reachable and serving `model`; plus the last generation this process saw succeed, or a
        four-token probe when there was none recently (a loaded model that cannot generate — a
        crashing build — is not healthy)."""
        try:
            with mapped_errors():
                names = [m.id for m in client(5.0).models.list().data]
        except LLMError as exc:
            return False, str(exc)
        if model not in names:
            return False, f"model server at {base_url()} does not serve {model!r} (it serves: {', '.join(names)})"
        max_age = float(llm_setting("BLOOM_LLM_HEALTH_PROBE_AGE", 300.0))
        seen = last_generation(model)
        if seen is None or seen[0] > max_age:
            probe = ChatRequest(model=model, messages=[{"role": "user", "content": "Count to three."}],
                                options={"max_tokens": 4, "temperature": 0}, timeout=30.0)
            try:
                self.chat(probe)
            except LLMError as exc:
                return False, f"model server at {base_url()} lists {model} but cannot generate: {exc}"
            seen = last_generation(model)
        assert seen is not None
        others = [name for name in names if name != model]
        return True, (f"{model} at {base_url()}; last generation ok {seen[0]:.0f}s ago "
                      f"({seen[1]:.1f} tok/s)" + (f"; also serves {', '.join(others)}" if others else ""))
