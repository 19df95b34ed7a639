"""The Ollama provider over real HTTP against the local fake Ollama server (which answers with the
real llama.cpp model and MiniLM). Errors map to typed errors and error rows."""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import override_settings

from bloom.tests.llm.fake_ollama_server import FAKE_OLLAMA_MODEL, refused_url, running_fake_ollama
from core import llm
from core.env import ModelSpec
from telemetry.models import ModelCall

pytestmark = pytest.mark.django_db

OLLAMA = ModelSpec("ollama", FAKE_OLLAMA_MODEL)
GREEDY = {"temperature": 0.0, "seed": 3}
QUICK_RETRY = {"BLOOM_LLM_BACKOFF": 0.001, "BLOOM_LLM_RETRIES": 1}


@pytest.fixture(scope="module")
def ok_server(chat_model_file):
    with running_fake_ollama("ok") as url:
        yield url


@pytest.fixture
def ollama_ok(ok_server):
    ok_server.server.requests.clear()
    with override_settings(OLLAMA_HOST=str(ok_server), BLOOM_LLM=OLLAMA, **QUICK_RETRY):
        yield ok_server


def test_stream_with_keep_alive_and_token_counts(ollama_ok):
    with llm.call_context(service="tests.ollama") as ctx:
        stream = llm.chat([{"role": "user", "content": "Say hello to Ada in one short sentence."}], stream=True,
                          options={**GREEDY, "max_tokens": 20, "keep_alive": "10m"})
        tokens = list(stream)
    assert len(tokens) > 1 and "".join(tokens).strip()
    sent = ollama_ok.server.requests[-1]
    assert sent["path"] == "/api/chat" and sent["stream"] is True and sent["keep_alive"] == "10m"
    assert sent["options"]["num_predict"] == 20 and sent["options"]["temperature"] == 0.0
    row = ModelCall.objects.get(call_id=stream.result.call_id)
    assert (row.provider, row.request_model, row.trace_id, row.status) == ("ollama", FAKE_OLLAMA_MODEL,
                                                                          ctx.trace_id, "ok")
    assert row.input_tokens > 0 and row.output_tokens > 0 and row.time_to_first_token_ms > 0
    assert row.response_model == FAKE_OLLAMA_MODEL


def test_format_json_schema(ollama_ok):
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
              "required": ["city", "country"]}
    result = llm.chat([{"role": "user", "content": "Name the capital of France and its country."}],
                      schema=schema, options={**GREEDY, "max_tokens": 40})
    assert isinstance(result.parsed["city"], str) and isinstance(result.parsed["country"], str)
    assert ollama_ok.server.requests[-1]["format"] == schema


def test_tool_call_round_trip_with_the_real_model(ollama_ok):
    """The fake server turns the real model's schema-constrained choice into Ollama's `tool_calls`:
    the request carries the tools in Ollama's format and the answer comes back as a tool call."""
    tools = [llm.ToolSpec(name="get_weather", description="Current weather for a city.",
                          parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                      "required": ["city"]})]
    result = llm.chat([{"role": "user", "content": "What is the weather in Paris? Use the tool."}], tools=tools,
                      options={**GREEDY, "max_tokens": 40})
    assert ollama_ok.server.requests[-1]["tools"][0]["function"]["name"] == "get_weather"
    assert [c.name for c in result.tool_calls] == ["get_weather"]
    assert isinstance(result.tool_calls[0].arguments["city"], str)
    assert result.finish_reason == "tool_calls"


# --- Ollama's native tool-call wire format, from a scripted server (a fake, for parsing only) ---
WEATHER = llm.ToolSpec(name="get_weather", description="Current weather for a city.",
                       parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                   "required": ["city"]})


@contextlib.contextmanager
def scripted_ollama(lines: list[dict]):
    """Answers every /api/chat with these NDJSON lines, as a real Ollama server streams a native
    tool call: the `tool_calls` arrive in a message chunk before the final `done` chunk, with the
    arguments as a JSON object (not a string)."""
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with override_settings(OLLAMA_HOST=f"http://127.0.0.1:{server.server_port}", BLOOM_LLM=OLLAMA,
                               **QUICK_RETRY):
            yield seen
    finally:
        server.shutdown()


def _tool_lines(calls: list[dict]) -> list[dict]:
    message = {"role": "assistant", "content": "", "tool_calls": [{"function": call} for call in calls]}
    return [{"model": FAKE_OLLAMA_MODEL, "created_at": "2026-12-01T00:00:00Z", "message": message, "done": False},
            {"model": FAKE_OLLAMA_MODEL, "created_at": "2026-12-01T00:00:01Z",
             "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
             "prompt_eval_count": 12, "eval_count": 7, "total_duration": 1000, "eval_duration": 500}]


def test_native_tool_calls_are_read_from_ollamas_wire_format():
    lines = _tool_lines([{"name": "get_weather", "arguments": {"city": "Paris"}},
                         {"name": "get_weather", "arguments": {"city": "Lisbon"}}])
    with scripted_ollama(lines) as seen:
        result = llm.chat([{"role": "user", "content": "Weather in Paris and Lisbon?"}], tools=[WEATHER])
    assert seen[-1]["tools"] == [WEATHER.as_openai()]  # Ollama takes OpenAI-style function specs
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris"}),
                                                                  ("get_weather", {"city": "Lisbon"})]
    assert result.finish_reason == "tool_calls"


@pytest.mark.parametrize("call", [{"name": "delete_everything", "arguments": {}},
                                  {"name": "get_weather", "arguments": {"town": "Paris"}}])
def test_a_native_tool_call_outside_the_offered_tools_is_invalid_output(call):
    with scripted_ollama(_tool_lines([call])), pytest.raises(llm.LLMInvalidOutput):
        llm.chat([{"role": "user", "content": "Weather?"}], tools=[WEATHER])


def test_embeddings_over_ollama(ollama_ok):
    with override_settings(BLOOM_EMBEDDINGS=ModelSpec("ollama", FAKE_OLLAMA_MODEL)):
        vectors = llm.embed(["I study Portuguese", "Estudo português", "The invoice is overdue"])
    assert len(vectors) == 3 and len(vectors[0]) == 384
    row = ModelCall.objects.get(operation="embeddings", provider="ollama")
    assert row.input_tokens > 0 and row.extra["n_texts"] == 3


def test_health_reports_missing_model(ollama_ok):
    from core.llm.providers import chat_provider

    assert chat_provider("ollama").health(FAKE_OLLAMA_MODEL)[0] is True
    ok, reason = chat_provider("ollama").health("llama3.2:70b")
    assert ok is False and "ollama pull" in reason


def test_unknown_model_is_unavailable_not_retried(ollama_ok):
    with pytest.raises(llm.LLMUnavailable, match="pulled"):
        llm.chat([{"role": "user", "content": "hi"}], model="ollama:not-there")
    assert ModelCall.objects.filter(request_model="not-there").count() == 1  # no retry


def _error_rows():
    return list(ModelCall.objects.filter(provider="ollama").order_by("created_at"))


def test_connection_refused_is_unavailable_with_error_rows():
    with override_settings(OLLAMA_HOST=refused_url(), BLOOM_LLM=OLLAMA, **QUICK_RETRY), \
            pytest.raises(llm.LLMUnavailable):
        llm.chat([{"role": "user", "content": "hi"}])
    rows = _error_rows()
    assert [(r.status, r.error_type, r.attempt) for r in rows] == [("error", "LLMUnavailable", 0),
                                                                   ("error", "LLMUnavailable", 1)]
    assert "unreachable" in rows[0].error_message


def test_http_500_is_unavailable_with_error_row(chat_model_file):
    with running_fake_ollama("error500") as url, \
            override_settings(OLLAMA_HOST=str(url), BLOOM_LLM=OLLAMA, **QUICK_RETRY):
        with pytest.raises(llm.LLMUnavailable, match="HTTP 500"):
            llm.chat([{"role": "user", "content": "hi"}], stream=True).collect()
        assert len(url.server.requests) == 2  # retried once: 5xx is transient
    assert {r.status for r in _error_rows()} == {"error"}


def test_http_503_is_overloaded(chat_model_file):
    with running_fake_ollama("overloaded") as url, \
            override_settings(OLLAMA_HOST=str(url), BLOOM_LLM=OLLAMA, BLOOM_LLM_RETRIES=0), \
            pytest.raises(llm.LLMOverloaded):
        llm.chat([{"role": "user", "content": "hi"}])
    assert _error_rows()[0].error_type == "LLMOverloaded"


def test_timeout_is_llm_timeout_with_timeout_row(chat_model_file):
    with running_fake_ollama("slow", delay=2.0) as url, \
            override_settings(OLLAMA_HOST=str(url), BLOOM_LLM=OLLAMA, BLOOM_LLM_RETRIES=0), \
            pytest.raises(llm.LLMTimeout):
        llm.chat([{"role": "user", "content": "hi"}], options={"timeout": 0.3})
    row = _error_rows()[0]
    assert (row.status, row.error_type) == ("timeout", "LLMTimeout")
    assert row.duration_ms < 2000


def test_error_mid_stream_is_typed_and_recorded(chat_model_file):
    with running_fake_ollama("stream_error") as url, \
            override_settings(OLLAMA_HOST=str(url), BLOOM_LLM=OLLAMA, **QUICK_RETRY):
        stream = llm.chat([{"role": "user", "content": "Write three sentences about rivers."}], stream=True,
                          options={**GREEDY, "max_tokens": 30})
        got = []
        with pytest.raises(llm.LLMUnavailable):
            for token in stream:
                got.append(token)
    assert len(got) == 3  # tokens already delivered are not repeated by a retry
    assert [r.status for r in _error_rows()] == ["error"]
