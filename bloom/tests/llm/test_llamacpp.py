"""The real in-process llama.cpp model through the facade, with the real telemetry recorder
writing rows to the real database."""

from __future__ import annotations

import re
import threading

import pytest
from django.test import override_settings

from core import llm
from core.env import ModelSpec
from telemetry.models import ModelCall

pytestmark = pytest.mark.django_db

FRUIT = {"type": "object", "properties": {"fruit": {"type": "string"}, "colour": {"type": "string"}},
         "required": ["fruit", "colour"]}
GREEDY = {"temperature": 0.0, "seed": 7}


def test_json_schema_chat_and_stream_are_recorded(llamacpp_model):
    with llm.call_context(learner_id=11, conversation_id=5, agent="tests", service="tests.llamacpp") as ctx:
        result = llm.chat([{"role": "user", "content": "Name one fruit and its colour."}], schema=FRUIT,
                          options={**GREEDY, "max_tokens": 40})
        stream = llm.chat([{"role": "user", "content": "Count from one to five."}], stream=True,
                          options={**GREEDY, "max_tokens": 24})
        tokens = list(stream)

    assert set(result.parsed) >= {"fruit", "colour"} and all(isinstance(v, str) for v in result.parsed.values())
    assert len(tokens) > 1 and "".join(tokens) == stream.result.text and stream.result.text.strip()

    rows = {row.call_id: row for row in ModelCall.objects.filter(trace_id=ctx.trace_id)}
    assert set(rows) == {result.call_id, stream.result.call_id}
    for row in rows.values():
        assert row.status == "ok" and row.operation == "chat" and row.provider == "llamacpp"
        assert row.input_tokens > 0 and row.output_tokens > 0
        assert row.duration_ms > 0 and row.learner_id == 11 and row.conversation_id == 5
        assert row.request_model == llamacpp_model and row.response_model
    streamed = rows[stream.result.call_id]
    assert 0 < streamed.time_to_first_token_ms <= streamed.duration_ms
    assert streamed.output_tokens == stream.result.usage.output_tokens


def test_plain_text_option_decodes_one_paragraph_in_process(llamacpp_model):
    """The plain-text grammar in-process: a list asked for comes back as one plain paragraph."""
    bait = [{"role": "user", "content": "Give me 5 numbered steps to learn to swim, as a markdown list."}]
    markdown = re.compile(r"(?m)\n|\*\*|^\s*(?:[-*•#]|\d+[.)])\s")
    free = llm.chat(bait, options={**GREEDY, "max_tokens": 60}).text
    plain = llm.chat(bait, options={**GREEDY, "max_tokens": 60, "plain_text": True}).text
    assert markdown.search(free), free
    assert plain.strip() and not markdown.search(plain), plain


def test_three_iteration_tool_loop_gives_three_rows(llamacpp_model):
    """A bounded ReAct-style loop: each model call runs under its loop index in one trace."""
    tools = [llm.ToolSpec(name="lookup_word", description="Look up the meaning of one English word.",
                          parameters={"type": "object", "properties": {"word": {"type": "string"}},
                                      "required": ["word"]})]
    messages = [{"role": "user", "content": "Use the lookup_word tool to look up the word 'serendipity'."}]
    with llm.call_context(agent="tool-loop") as ctx:
        for i in range(3):
            with llm.call_context(loop_iteration=i):
                result = llm.chat(messages, tools=tools, options={**GREEDY, "max_tokens": 32})
            assert result.tool_calls or result.text
            for call in result.tool_calls:
                assert call.name == "lookup_word" and isinstance(call.arguments.get("word"), str)
                messages = [*messages,
                            {"role": "assistant", "content": "",
                             "tool_calls": [{"name": call.name, "arguments": call.arguments}]},
                            # Short results keep the model's next arguments short (grammar
                            # sampling costs per token).
                            {"role": "tool", "name": call.name, "content": f"luck {i}"}]
            if not result.tool_calls:
                messages = [*messages, {"role": "assistant", "content": result.text},
                            {"role": "user", "content": "Look it up again with the tool."}]
    rows = list(ModelCall.objects.filter(trace_id=ctx.trace_id).order_by("created_at"))
    assert [r.loop_iteration for r in rows] == [0, 1, 2]
    assert {r.agent for r in rows} == {"tool-loop"} and all(r.status == "ok" for r in rows)


@pytest.mark.django_db(transaction=True)  # rows are written from other threads' connections
def test_concurrent_requests_share_one_model_safely(llamacpp_model):
    from django.db import connection

    results, errors = [], []

    def ask(n: int):
        try:
            results.append(llm.chat([{"role": "user", "content": f"Say the number {n}."}],
                                    options={**GREEDY, "max_tokens": 8}))
        except Exception as exc:  # collected for the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=ask, args=(n,)) for n in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == 3 and all(r.text.strip() for r in results)
    assert ModelCall.objects.filter(call_id__in=[r.call_id for r in results], status="ok").count() == 3


def test_missing_model_file_is_unavailable_with_instructions(tmp_path):
    with override_settings(BLOOM_LLM=ModelSpec("llamacpp", str(tmp_path / "nope.gguf"))):
        with pytest.raises(llm.LLMUnavailable, match="bloom_models"):
            llm.chat([{"role": "user", "content": "hi"}])
        # Only the chat part: llm.health() would also load the embedding and entity models.
        from core.llm.providers import chat_provider

        ok, reason = chat_provider("llamacpp").health(str(tmp_path / "nope.gguf"))
    assert ok is False and "bloom_models" in reason
    row = ModelCall.objects.get(request_model=str(tmp_path / "nope.gguf"))
    assert row.status == "error" and row.error_type == "LLMUnavailable"


def test_timeout_stops_generation(llamacpp_model):
    with pytest.raises(llm.LLMTimeout), override_settings(BLOOM_LLM_RETRIES=0):
        llm.chat([{"role": "user", "content": "Write a long story about a dragon."}],
                 options={**GREEDY, "max_tokens": 400, "timeout": 0.2})
    assert ModelCall.objects.filter(status="timeout", provider="llamacpp").count() == 1


def test_a_busy_local_model_is_overloaded_not_broken(llamacpp_model):
    """Waiting for the model is bounded (BLOOM_LLM_QUEUE_TIMEOUT) separately from generation; a full
    queue raises LLMOverloaded that is not retried and does not open the breaker."""
    from core.llm.providers import llamacpp
    from core.llm.resilience import breaker

    _, lock = llamacpp.load_model(llamacpp_model)
    assert lock.acquire(timeout=30)
    try:
        with override_settings(BLOOM_LLM_QUEUE_TIMEOUT=0.2), pytest.raises(llm.LLMOverloaded) as info:
            llm.chat([{"role": "user", "content": "hi"}], options={**GREEDY, "max_tokens": 4})
    finally:
        lock.release()
    assert info.value.transient is False and info.value.retry_after == 10
    assert breaker("llamacpp").state() == "closed"


def test_queue_wait_is_recorded_and_not_charged_to_the_generation_timeout(llamacpp_model):
    """Holds on a slow or busy machine: the generation timeout is set from this machine's own
    speed (ten times an unqueued call, measured just before), and the model is then held for
    longer than that timeout. Only a wait charged to the timeout can fail the call."""
    import time

    from core.llm.providers import llamacpp

    prompt = [{"role": "user", "content": "Say hi."}]
    options = {**GREEDY, "max_tokens": 4}
    started = time.monotonic()
    llm.chat(prompt, options=options)
    timeout = max(10 * (time.monotonic() - started), 2.0)
    _, lock = llamacpp.load_model(llamacpp_model)
    assert lock.acquire(timeout=30)
    holder = threading.Timer(timeout + 1.0, lock.release)  # another turn holds the model past the timeout
    holder.start()
    with llm.call_context(service="tests.queue") as ctx, override_settings(BLOOM_LLM_TIMEOUT=timeout):
        result = llm.chat(prompt, options=options)
    holder.join()
    assert result.text
    row = ModelCall.objects.get(trace_id=ctx.trace_id)
    assert row.status == "ok" and row.extra["queued_s"] >= timeout
