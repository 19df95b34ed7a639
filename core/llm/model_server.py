"""The embedded model server: llama-cpp-python's OpenAI-compatible server (a maintained server,
not one of ours) in its own process, shared by the web process and the workers.

Why a process of its own: native model code that crashes (a llama.cpp build that mishandles the
CPU, an out-of-memory kill) then takes down one supervised process that is restarted, never the
web server with every learner's open request; and one process owns the cores instead of a
llama.cpp per web/worker process spinning on shared cores.

What Bloom adds in front of the maintained app, as a thin ASGI layer:
- `response_format` of type `json_schema` (the OpenAI form, what vLLM, Ollama's /v1 and
  llama-server take) is rewritten to llama-cpp-python's `{"type": "json_object", "schema": ...}`,
  so Bloom's provider speaks one protocol to every server;
- a request for a model this server does not serve gets 404 (llama-cpp-python would silently
  answer with its default model).
Settings: `interrupt_requests=False` — llama-cpp-python otherwise cuts a streaming answer short
whenever another request arrives; Bloom decides what yields (background work, core.llm.priority)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from core.llm import grammar_sampling

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def to_llamacpp_request(body: dict[str, Any]) -> dict[str, Any]:
    """OpenAI `json_schema` response format -> llama-cpp-python's `json_object` + `schema`."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        body["response_format"] = {"type": "json_object", **({"schema": schema} if schema else {})}
    return body


class OpenAIShim:
    """ASGI middleware around llama-cpp-python's app (see the module docstring)."""

    def __init__(self, app: Callable, served: set[str]):
        self.app, self.served = app, served

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or \
                scope.get("path") not in ("/v1/chat/completions", "/v1/completions"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if isinstance(body, dict):
            model = body.get("model")
            if model and model not in self.served:
                await _json_error(send, 404, f"model {model!r} is not served here (served: "
                                             f"{', '.join(sorted(self.served))})", "model_not_found")
                return
            raw = json.dumps(to_llamacpp_request(body)).encode()
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()  # after the body: the disconnect the server watches for

        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(raw)).encode()))
        await self.app({**scope, "headers": headers}, replay, send)


async def _json_error(send: Send, status: int, message: str, code: str) -> None:
    payload = json.dumps({"error": {"message": message, "type": code, "code": code}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


def _stream_with_usage(create_chat_completion: Callable) -> Callable:
    """llama-cpp-python streams carry no token counts. Telemetry needs them, so a streamed
    completion ends with one OpenAI-style usage chunk (empty `choices`, as with
    `stream_options.include_usage`), computed inside the generation, while the model's lock is
    still held: the context then holds exactly this request's prompt + completion tokens."""

    def wrapper(self, *args: Any, **kwargs: Any) -> Any:
        result = create_chat_completion(self, *args, **kwargs)
        if not kwargs.get("stream"):
            return result

        def chunks():
            completion, last = 0, None
            for chunk in result:
                last = chunk
                if any((c.get("delta") or {}).get("content") for c in chunk.get("choices", [])):
                    completion += 1
                yield chunk
            prompt = max(int(self.n_tokens) - completion, 0)
            yield {"id": (last or {}).get("id", "usage"), "object": "chat.completion.chunk",
                   "created": (last or {}).get("created", 0), "model": (last or {}).get("model", ""),
                   "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                            "total_tokens": prompt + completion}}

        return chunks()

    wrapper.bloom_usage = True  # type: ignore[attr-defined]
    return wrapper


def _keep_models_resident(app_module: Any) -> None:
    """llama-cpp-python's proxy holds one model at a time: a request for another model closes the
    loaded one and loads the asked one. With a model per job (chat on one model, extraction on
    another) every alternation would reload a GGUF. Bloom's server keeps each model it has loaded
    (the default at start, the others on their first request): memory for speed, measured in
    docs/model-runtime.md. Requests still run one at a time (the app's lock), so the cores stay
    with one generation."""
    proxy = app_module._llama_proxy

    class ResidentLlamaProxy(type(proxy)):  # type: ignore[misc]
        def __call__(self, model: str | None = None):
            alias = model if model in self._model_settings_dict else self._default_model_alias
            if alias not in self._resident:
                self._resident[alias] = self.load_llama_from_model_settings(self._model_settings_dict[alias])
            self._current_model, self._current_model_alias = self._resident[alias], alias
            return self._current_model

        def free(self) -> None:
            for llama in self._resident.values():
                llama.close()
            self._resident.clear()

    proxy.__class__ = ResidentLlamaProxy
    proxy._resident = {proxy._current_model_alias: proxy._current_model}


def build_app(models: dict[str, Path], *, n_ctx: int, n_threads: int, api_key: str | None = None):
    """The ASGI app serving `models` (alias -> GGUF path; the first is loaded at start, others on
    their first request, then kept loaded: see _keep_models_resident)."""
    import llama_cpp
    from llama_cpp.server import app as app_module
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    grammar_sampling.install()
    if not getattr(llama_cpp.Llama.create_chat_completion, "bloom_usage", False):
        llama_cpp.Llama.create_chat_completion = _stream_with_usage(llama_cpp.Llama.create_chat_completion)

    model_settings = [
        ModelSettings(model=str(path), model_alias=alias, n_ctx=n_ctx, n_threads=n_threads,
                      n_threads_batch=n_threads, verbose=False)
        for alias, path in models.items()
    ]
    server = ServerSettings(interrupt_requests=False, api_key=api_key or None)
    app = create_app(server_settings=server, model_settings=model_settings)
    _keep_models_resident(app_module)
    return OpenAIShim(app, set(models))
