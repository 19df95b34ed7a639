"""The OpenAI-compatible provider over real HTTP: against the real embedded model server
(`manage.py model_server`, real llama.cpp, started once per session by the root conftest) for
schema output, streaming, token counts and cancellation; against a refused port and a small stub
HTTP server for the failures a real server cannot be made to produce on demand (a 500, a stall).
Every outcome is checked as the typed error *and* its telemetry row."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.conf import settings
from django.test import override_settings

from bloom.tests.reliability import procs
from core import llm
from core.env import ModelSpec
from core.llm import assets
from core.llm.providers import chat_provider
from telemetry.models import ModelCall

pytestmark = pytest.mark.django_db

MODEL = assets.DEFAULT_CHAT_MODEL
FRUIT = {"type": "object", "properties": {"fruit": {"type": "string"}, "colour": {"type": "string"}},
         "required": ["fruit", "colour"]}
GREEDY = {"temperature": 0.0, "seed": 7}
QUICK = {"BLOOM_LLM_RETRIES": 0, "BLOOM_LLM_BACKOFF": 0.001}


@pytest.fixture
def served(embedded_model_server):
    if embedded_model_server is None:
        pytest.skip("no embedded model server (chat model not assembled, or BLOOM_TEST_MODEL_SERVER=external)")
    with override_settings(BLOOM_LLM=ModelSpec("openai", MODEL), **QUICK):
        yield settings.OPENAI_BASE_URL


# Each chat model `bloom_models` installs, through the same server: grammar, schema output,
# streaming, cancellation and telemetry must hold for the larger one as for the default.
LARGER = "qwen2.5-coder-1.5b-instruct-q4"
SERVED_MODELS = [pytest.param(MODEL, id="0.5b"), pytest.param(LARGER, id="1.5b", marks=pytest.mark.slow)]


@pytest.fixture(params=SERVED_MODELS)
def served_model(request, embedded_model_server):
    """The model name, set as BLOOM_LLM, on the session's real model server."""
    if embedded_model_server is None:
        pytest.skip("no embedded model server (chat model not assembled, or BLOOM_TEST_MODEL_SERVER=external)")
    if not assets.chat_model_path(request.param).is_file():
        pytest.fail(f"{request.param} is not in the model cache: run `manage.py bloom_models` (make test does)")
    with override_settings(BLOOM_LLM=ModelSpec("openai", request.param), **QUICK):
        yield request.param


class StubServer(ThreadingHTTPServer):
    """Answers every POST with `status` (and stalls `delay` seconds first)."""

    def __init__(self, status: int = 500, delay: float = 0.0):
        self.status, self.delay = status, delay

        class Handler(BaseHTTPRequestHandler):
            def do_POST(handler):
                handler.rfile.read(int(handler.headers.get("content-length") or 0))
                time.sleep(self.delay)
                body = json.dumps({"error": {"message": "stub failure", "type": "server_error"}}).encode()
                handler.send_response(self.status)
                handler.send_header("content-type", "application/json")
                handler.send_header("content-length", str(len(body)))
                handler.end_headers()
                handler.wfile.write(body)

            def log_message(handler, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


def test_schema_output_and_stream_through_the_real_server_are_recorded(served_model):
    with llm.call_context(learner_id=3, agent="tests", service="tests.openai") as ctx:
        result = llm.chat([{"role": "user", "content": "Name one fruit and its colour."}], schema=FRUIT,
                          options={**GREEDY, "max_tokens": 40})
        stream = llm.chat([{"role": "user", "content": "Count from one to five."}], stream=True,
                          options={**GREEDY, "max_tokens": 24})
        tokens = list(stream)
    assert set(result.parsed) >= {"fruit", "colour"} and all(isinstance(v, str) for v in result.parsed.values())
    assert len(tokens) > 1 and "".join(tokens) == stream.result.text
    rows = {row.call_id: row for row in ModelCall.objects.filter(trace_id=ctx.trace_id)}
    assert set(rows) == {result.call_id, stream.result.call_id}
    for row in rows.values():
        assert row.status == "ok" and row.provider == "openai" and row.request_model == served_model
        assert row.response_model == served_model  # the server answered with the model asked for
        # Token counts come from the server's usage chunk (the embedded server adds it).
        assert row.input_tokens > 5 and row.output_tokens > 0
    assert rows[stream.result.call_id].output_tokens == len(tokens)
    assert 0 < rows[stream.result.call_id].time_to_first_token_ms <= rows[stream.result.call_id].duration_ms


LIST_BAIT = [{"role": "user", "content": "Give me 5 numbered steps to learn to swim, as a markdown list."}]
MARKDOWN = re.compile(r"(?m)\n|\*\*|^\s*(?:[-*•#]|\d+[.)])\s")


def test_plain_text_option_decodes_one_paragraph_on_the_real_server(served_model):
    """core/llm/grammars.py through llama.cpp's server: asked for a markdown list, the model writes
    one; under `plain_text` the same request comes back as one paragraph without markdown marks."""
    free = llm.chat(LIST_BAIT, options={**GREEDY, "max_tokens": 60}).text
    plain = llm.chat(LIST_BAIT, options={**GREEDY, "max_tokens": 60, "plain_text": True}).text
    assert MARKDOWN.search(free), free  # the bait works: without the grammar there is a list
    assert plain.strip() and not MARKDOWN.search(plain), plain


def test_tools_through_the_schema_on_the_real_server(served_model):
    tools = [llm.ToolSpec(name="lookup_word", description="Look up the meaning of one English word.",
                          parameters={"type": "object", "properties": {"word": {"type": "string"}},
                                      "required": ["word"]})]
    result = llm.chat([{"role": "user", "content": "Use the lookup_word tool to look up 'serendipity'."}],
                      tools=tools, options={**GREEDY, "max_tokens": 40})
    assert result.tool_calls or result.text
    for call in result.tool_calls:
        assert call.name == "lookup_word" and isinstance(call.arguments["word"], str)


def test_a_model_the_server_does_not_serve_is_unavailable_not_retried(served):
    with override_settings(BLOOM_LLM=ModelSpec("openai", "no-such-model")), pytest.raises(llm.LLMUnavailable) as info:
        llm.chat([{"role": "user", "content": "hi"}], options={"max_tokens": 2})
    assert info.value.transient is False and "404" in str(info.value)
    assert ModelCall.objects.get(request_model="no-such-model").error_type == "LLMUnavailable"


def test_refused_connection_is_unavailable_with_an_error_row():
    port = procs.free_port()  # nothing listens there
    with override_settings(BLOOM_LLM=ModelSpec("openai", MODEL), OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
                           **QUICK), pytest.raises(llm.LLMUnavailable, match="unreachable"):
        llm.chat([{"role": "user", "content": "hi"}])
    row = ModelCall.objects.get(provider="openai")
    assert row.status == "error" and row.error_type == "LLMUnavailable" and "unreachable" in row.error_message


@pytest.mark.parametrize(("status", "error"), [(500, llm.LLMUnavailable), (503, llm.LLMOverloaded),
                                                (400, llm.LLMError)])
def test_http_errors_map_to_typed_errors(status, error):
    stub = StubServer(status=status)
    try:
        with override_settings(BLOOM_LLM=ModelSpec("openai", MODEL), OPENAI_BASE_URL=stub.url, **QUICK), \
                pytest.raises(error) as info:
            llm.chat([{"role": "user", "content": "hi"}])
    finally:
        stub.close()
    assert type(info.value) is error and f"HTTP {status}" in str(info.value)
    row = ModelCall.objects.get(provider="openai")
    assert row.status == "error" and row.error_type == error.__name__


def test_a_stalled_server_times_out_with_a_timeout_row():
    stub = StubServer(status=200, delay=5.0)
    try:
        with override_settings(BLOOM_LLM=ModelSpec("openai", MODEL), OPENAI_BASE_URL=stub.url,
                               BLOOM_LLM_QUEUE_TIMEOUT=0.3, **QUICK), pytest.raises(llm.LLMTimeout):
            llm.chat([{"role": "user", "content": "hi"}], options={"timeout": 0.3})
    finally:
        stub.close()
    assert ModelCall.objects.get(provider="openai").status == "timeout"


def test_health_reports_the_last_generation_and_a_missing_server(served_model):
    llm.chat([{"role": "user", "content": "Say ok."}], options={**GREEDY, "max_tokens": 2})
    ok, reason = chat_provider("openai").health(served_model)
    assert ok and "last generation ok" in reason and "tok/s" in reason
    with override_settings(OPENAI_BASE_URL=f"http://127.0.0.1:{procs.free_port()}/v1"):
        ok, reason = chat_provider("openai").health(served_model)
    assert not ok and "unreachable" in reason


def test_closing_a_stream_frees_the_model_at_once(served_model):
    """A cancelled generation must not keep the single model busy: the server stops at the next
    token once the client disconnects. If it ran on to its 300-token limit, the next request would
    wait for those tokens; the bound below is a quarter of that time at this machine's own speed."""
    stream = llm.chat([{"role": "user", "content": "Write a very long story about a dragon."}], stream=True,
                      options={**GREEDY, "max_tokens": 300})
    pieces, started = iter(stream), time.monotonic()
    first = [next(pieces) for _ in range(6)]
    per_token = (time.monotonic() - started) / len(first)
    stream.close()
    asked = time.monotonic()
    llm.chat([{"role": "user", "content": "Say ok."}], options={**GREEDY, "max_tokens": 2})
    waited = time.monotonic() - asked
    assert waited < 300 * per_token / 4, f"next request waited {waited:.1f}s at {per_token:.2f}s/token"
    assert ModelCall.objects.filter(status="cancelled", provider="openai").count() == 1
