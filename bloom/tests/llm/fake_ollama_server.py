"""A local stand-in for an Ollama server, for tests: real HTTP on 127.0.0.1, Ollama's wire
protocol (`/api/chat` with NDJSON streaming, `format`, `tools`, `options`, `keep_alive`;
`/api/embed`; `/api/tags`; `/api/ps`; error statuses), answered by the REAL llama.cpp chat model
and the real MiniLM encoder, so the text and vectors are real. Only the transport is a stand-in.

    with running_fake_ollama(mode="ok") as base_url:
        with override_settings(OLLAMA_HOST=base_url, BLOOM_LLM=ModelSpec("ollama", FAKE_OLLAMA_MODEL)):
            ...
        base_url.server.requests  # the JSON bodies received, for assertions

Modes: ok · error500 (every POST → 500) · overloaded (503) · rate_limited (429) · slow (sleeps
`delay` seconds before answering) · stream_error (a few tokens, then an error line) ·
bad_json (schema requests get non-JSON text back)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_OLLAMA_MODEL = "qwen2.5-coder:0.5b"
BACKING_MODEL = "qwen2.5-coder-0.5b-instruct-q4"
MODES = ("ok", "error500", "overloaded", "rate_limited", "slow", "stream_error", "bad_json")


class FakeOllamaURL(str):
    """The base URL, carrying the server so tests can inspect what it received."""

    server: FakeOllamaServer


class FakeOllamaServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, mode: str, models: tuple[str, ...], delay: float):
        if mode not in MODES:
            raise ValueError(f"unknown fake ollama mode {mode!r} (one of {', '.join(MODES)})")
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.models = models
        self.delay = delay
        self.requests: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class _Handler(BaseHTTPRequestHandler):
    server: FakeOllamaServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # keep test output quiet
        return

    # --- plumbing ---------------------------------------------------------------------------
    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_ndjson(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _line(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        body = json.loads(raw or b"{}")
        self.server.requests.append({"path": self.path, **body})
        return body

    # --- routes -----------------------------------------------------------------------------
    def do_GET(self):
        if self.path == "/api/tags":
            self._json(200, {"models": [{"name": m, "model": m, "modified_at": _now(), "size": 491400064,
                                         "digest": "0" * 64, "details": {"format": "gguf", "family": "qwen2"}}
                                        for m in self.server.models]})
        elif self.path == "/api/ps":
            self._json(200, {"models": []})
        elif self.path in ("/", "/api/version"):
            self._json(200, {"version": "0.0.0-fake"})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self):
        body = self._body()
        mode = self.server.mode
        if mode == "slow":
            time.sleep(self.server.delay)
        if mode == "error500":
            return self._json(500, {"error": "llama runner process has terminated: fake failure"})
        if mode == "overloaded":
            return self._json(503, {"error": "server busy, please try again. maximum pending requests exceeded"})
        if mode == "rate_limited":
            return self._json(429, {"error": "too many requests"})
        if self.path in ("/api/chat", "/api/embed") and body.get("model") not in self.server.models:
            return self._json(404, {"error": f"model '{body.get('model')}' not found"})
        if self.path == "/api/chat":
            return self._chat(body)
        if self.path == "/api/embed":
            return self._embed(body)
        return self._json(404, {"error": "not found"})

    def _embed(self, body: dict[str, Any]) -> None:
        from core.llm.providers import minilm

        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else list(texts)
        encoder = minilm.load()
        with minilm._lock:
            vectors = encoder.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
        tokens = sum(len(encoder.tokenizer.tokenize(t)) + 2 for t in texts)
        self._json(200, {"model": body["model"], "embeddings": vectors.astype(float).tolist(),
                         "total_duration": 1, "load_duration": 0, "prompt_eval_count": tokens})

    def _chat(self, body: dict[str, Any]) -> None:
        started = time.perf_counter_ns()
        stream = body.get("stream", True)
        try:
            pieces, final = self._generate(body)
            if stream:
                self._start_ndjson()
                for n, piece in enumerate(pieces):
                    if self.server.mode == "stream_error" and n == 3:
                        self._line({"error": "an error was encountered while running the model"})
                        return self._end_chunks()
                    self._line({"model": body["model"], "created_at": _now(),
                                "message": {"role": "assistant", "content": piece}, "done": False})
                final_body = final()
                final_body["total_duration"] = time.perf_counter_ns() - started
                self._line(final_body)
                return self._end_chunks()
            text = "".join(pieces)
            final_body = final()
            final_body["message"]["content"] = text if not final_body["message"].get("tool_calls") else ""
            final_body["total_duration"] = time.perf_counter_ns() - started
            return self._json(200, final_body)
        except (BrokenPipeError, ConnectionResetError):
            return None

    def _generate(self, body: dict[str, Any]):
        """Run the real model. Returns (iterator of text pieces, callable building the done line)."""
        from core.llm.providers import llamacpp
        from core.llm.providers.common import flatten_tool_messages, tool_choice_schema, tool_system_prompt
        from core.llm.types import ToolSpec

        llm, lock = llamacpp.load_model(BACKING_MODEL)
        options = body.get("options") or {}
        kwargs: dict[str, Any] = {"max_tokens": int(options.get("num_predict", 128))}
        for name in ("temperature", "top_p", "top_k", "seed", "stop"):
            if options.get(name) is not None:
                kwargs[name] = options[name]
        messages = flatten_tool_messages([
            {**m, "tool_calls": [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                                 for c in m.get("tool_calls") or []] or None}
            for m in body.get("messages") or []])
        tools = [ToolSpec(name=t["function"]["name"], description=t["function"].get("description", ""),
                          parameters=t["function"].get("parameters") or {"type": "object"})
                 for t in body.get("tools") or []]
        fmt = body.get("format")
        if tools:
            messages = [{"role": "system", "content": tool_system_prompt(tools)}, *messages]
            kwargs["response_format"] = {"type": "json_object", "schema": tool_choice_schema(tools)}
        elif isinstance(fmt, dict) and self.server.mode != "bad_json":
            kwargs["response_format"] = {"type": "json_object", "schema": fmt}
        elif fmt == "json" and self.server.mode != "bad_json":
            kwargs["response_format"] = {"type": "json_object"}
        state: dict[str, Any] = {"text": "", "finish": "stop", "eval": 0, "prompt": 0}

        def pieces() -> Iterator[str]:
            t0 = time.perf_counter_ns()
            with lock:
                for chunk in llm.create_chat_completion(messages=messages, stream=True, **kwargs):
                    choice = chunk["choices"][0]
                    piece = choice.get("delta", {}).get("content")
                    if choice.get("finish_reason"):
                        state["finish"] = choice["finish_reason"]
                    if piece:
                        state["text"] += piece
                        if not tools:
                            yield piece
                out = len(llm.tokenize(state["text"].encode(), add_bos=False, special=False)) if state["text"] else 0
                state["eval"], state["prompt"] = out, max(int(llm.n_tokens) - out, 0)
                state["eval_duration"] = time.perf_counter_ns() - t0
            if tools:
                choice = json.loads(state["text"])
                if "answer" in choice:
                    state["text"] = choice["answer"]
                    yield choice["answer"]
                else:
                    state["tool_calls"] = [{"function": {"name": c["name"], "arguments": c["arguments"]}}
                                           for c in choice["tool_calls"]]

        def final() -> dict[str, Any]:
            message: dict[str, Any] = {"role": "assistant", "content": ""}
            if state.get("tool_calls"):
                message["tool_calls"] = state["tool_calls"]
            return {"model": body["model"], "created_at": _now(), "message": message, "done": True,
                    "done_reason": state["finish"], "load_duration": 0, "prompt_eval_count": state["prompt"],
                    "prompt_eval_duration": 0, "eval_count": state["eval"],
                    "eval_duration": state.get("eval_duration", 0)}

        # Materialise for non-streaming answers; stream lazily otherwise.
        gen = pieces()
        return (gen if body.get("stream", True) else list(gen)), final


@contextlib.contextmanager
def running_fake_ollama(mode: str = "ok", *, models: tuple[str, ...] = (FAKE_OLLAMA_MODEL,),
                        delay: float = 5.0) -> Iterator[FakeOllamaURL]:
    server = FakeOllamaServer(mode, models, delay)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
                              name=f"fake-ollama-{mode}")
    thread.start()
    url = FakeOllamaURL(server.base_url)
    url.server = server
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def refused_url() -> str:
    """A URL on which nothing listens (connection refused)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
