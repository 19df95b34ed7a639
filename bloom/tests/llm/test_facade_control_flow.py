"""Control flow of the facade with the scripted FAKE provider (no model behaviour is tested here):
retries only on transient errors, the circuit breaker, cancellation, parse errors, bad input,
and that a failing observer never breaks a call."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from core import llm
from core.llm.providers.fake import Scripted
from core.llm.resilience import breaker

MSG = [{"role": "user", "content": "hi"}]


def test_plain_chat_records_start_and_end_with_context(fake_chat, captured):
    fake_chat.push(Scripted(text="hello there", input_tokens=7, output_tokens=2))
    with llm.call_context(learner_id=4, agent="planner", service="tests") as ctx:
        result = llm.chat(MSG)
    assert result.text == "hello there"
    assert [r.call_id for r in captured.started] == [r.call_id for r in captured.ended] == [result.call_id]
    record = captured.ended[0]
    assert (record.status, record.input_tokens, record.output_tokens) == ("ok", 7, 2)
    assert record.context.trace_id == ctx.trace_id and record.context.learner_id == 4
    assert record.context.agent == "planner" and record.duration_s >= 0


def test_retries_transient_errors_then_succeeds(fake_chat, captured):
    fake_chat.push(llm.LLMUnavailable("down"), llm.LLMTimeout("slow"), Scripted(text="ok now"))
    result = llm.chat(MSG)
    assert result.text == "ok now"
    assert [r.status for r in captured.ended] == ["error", "timeout", "ok"]
    assert [r.extra.get("attempt", 0) for r in captured.ended] == [0, 1, 2]
    assert fake_chat.pending() == 0


def test_gives_up_after_configured_retries(fake_chat, captured):
    fake_chat.push(*[llm.LLMOverloaded("busy") for _ in range(5)])
    with override_settings(BLOOM_LLM_RETRIES=1), pytest.raises(llm.LLMOverloaded):
        llm.chat(MSG)
    assert len(captured.ended) == 2  # first try + one retry
    assert fake_chat.pending() == 3


@pytest.mark.parametrize("error", [llm.LLMInvalidOutput("bad shape"), llm.LLMError("bad request"),
                                   llm.LLMUnavailable("model file missing", transient=False)])
def test_non_transient_errors_are_not_retried(fake_chat, captured, error):
    fake_chat.push(error, Scripted(text="never reached"))
    with pytest.raises(type(error)):
        llm.chat(MSG)
    assert len(captured.ended) == 1
    assert captured.ended[0].error_type == type(error).__name__
    assert fake_chat.pending() == 1


def test_circuit_breaker_opens_and_fails_fast(fake_chat, captured):
    with override_settings(BLOOM_LLM_RETRIES=0, BLOOM_LLM_BREAKER_THRESHOLD=3, BLOOM_LLM_BREAKER_COOLDOWN=60):
        for _ in range(3):
            fake_chat.push(llm.LLMUnavailable("down"))
            with pytest.raises(llm.LLMUnavailable):
                llm.chat(MSG)
        assert breaker("fake").state() == "open"
        fake_chat.push(Scripted(text="would succeed"))
        with pytest.raises(llm.LLMOverloaded) as info:
            llm.chat(MSG)
    assert 0 < info.value.retry_after <= 60
    assert fake_chat.pending() == 1  # the provider was not called
    assert captured.ended[-1].extra.get("circuit_open") is True
    assert captured.ended[-1].error_type == "LLMOverloaded"


def test_circuit_breaker_half_open_trial_closes_it(fake_chat):
    with override_settings(BLOOM_LLM_RETRIES=0, BLOOM_LLM_BREAKER_THRESHOLD=1, BLOOM_LLM_BREAKER_COOLDOWN=0.05):
        fake_chat.push(llm.LLMTimeout("slow"))
        with pytest.raises(llm.LLMTimeout):
            llm.chat(MSG)
        assert breaker("fake").state() == "open"
        import time

        time.sleep(0.06)
        assert breaker("fake").state() == "half_open"
        fake_chat.push(Scripted(text="recovered"))
        assert llm.chat(MSG).text == "recovered"
        assert breaker("fake").state() == "closed"


def test_schema_output_parsed_and_malformed_is_parse_error(fake_chat, captured):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    fake_chat.push(Scripted(text='{"n": 3}'), Scripted(text="not json"), Scripted(text='{"n": "three"}'))
    assert llm.chat(MSG, schema=schema).parsed == {"n": 3}
    for _ in range(2):
        with pytest.raises(llm.LLMInvalidOutput):
            llm.chat(MSG, schema=schema)
    assert [r.status for r in captured.ended] == ["ok", "parse_error", "parse_error"]


def test_tool_output_parsing(fake_chat):
    tools = [llm.ToolSpec(name="add", description="Add.", parameters={
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})]
    fake_chat.push(json.dumps({"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}),
                   json.dumps({"answer": "done"}),
                   json.dumps({"tool_calls": [{"name": "rm_rf", "arguments": {}}]}))
    first = llm.chat(MSG, tools=tools)
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("add", {"a": 1})]
    assert first.finish_reason == "tool_calls"
    assert llm.chat(MSG, tools=tools).text == "done"
    with pytest.raises(llm.LLMInvalidOutput, match="unknown tool"):
        llm.chat(MSG, tools=tools)


def test_stream_yields_tokens_and_result(fake_chat, captured):
    fake_chat.push(Scripted(text="one two three", tokens=["one ", "two ", "three"]))
    stream = llm.chat(MSG, stream=True)
    assert list(stream) == ["one ", "two ", "three"]
    assert stream.result.text == "one two three" and stream.result.call_id == stream.call_id
    assert captured.ended[0].status == "ok" and captured.ended[0].time_to_first_token_s is not None


def test_stream_abandoned_midway_is_cancelled(fake_chat, captured):
    fake_chat.push(Scripted(text="a b c d e"))
    stream = llm.chat(MSG, stream=True)
    assert next(iter(stream)) == "a "
    stream.close()
    assert [r.status for r in captured.ended] == ["cancelled"]
    assert stream.result is None


def test_stream_error_after_tokens_is_not_retried(fake_chat, captured):
    fake_chat.push(Scripted(text="a b", raise_after_tokens=llm.LLMUnavailable("connection dropped")),
                   Scripted(text="second"))
    stream = llm.chat(MSG, stream=True)
    got = []
    with pytest.raises(llm.LLMUnavailable):
        for token in stream:
            got.append(token)
    assert got == ["a ", "b "]  # nothing repeated
    assert fake_chat.pending() == 1
    assert [r.status for r in captured.ended] == ["error"]


def test_stream_retries_before_first_token(fake_chat, captured):
    fake_chat.push(llm.LLMTimeout("slow start"), Scripted(text="fine"))
    assert "".join(llm.chat(MSG, stream=True)) == "fine "
    assert [r.status for r in captured.ended] == ["timeout", "ok"]


def test_failing_observer_does_not_break_the_call(fake_chat, captured, caplog):
    class Broken:
        def on_start(self, record):
            raise RuntimeError("observer start exploded")

        def on_end(self, record):
            raise RuntimeError("observer end exploded")

    broken = Broken()
    llm.register_observer(broken)
    try:
        fake_chat.push(Scripted(text="still fine"))
        assert llm.chat(MSG).text == "still fine"
    finally:
        llm.unregister_observer(broken)
    assert captured.ended[0].status == "ok"  # other observers still told
    assert "observer end exploded" in caplog.text


@pytest.mark.parametrize("messages, match", [
    ([], "non-empty"),
    ("hello", "non-empty"),
    ([{"role": "wizard", "content": "x"}], "role"),
    ([{"role": "user", "content": 5}], "content"),
])
def test_bad_messages_rejected_before_any_call(fake_chat, captured, messages, match):
    with pytest.raises(ValueError, match=match):
        llm.chat(messages)
    assert captured.started == []


def test_model_override_must_name_a_provider(fake_chat):
    with pytest.raises(ValueError, match="provider:name"):
        llm.chat(MSG, model="gpt-4")
    fake_chat.push(Scripted(text="judge says"))
    result = llm.chat(MSG, model="fake:judge-model", operation="judge")
    assert result.request_model == "judge-model"
    assert fake_chat.requests[-1].model == "judge-model"


def test_embeddings_reject_nan(monkeypatch, captured):
    from core.env import ModelSpec
    from core.llm.providers.fake import HashingFakeEmbeddings

    monkeypatch.setattr(HashingFakeEmbeddings, "embed",
                        lambda self, model, texts, timeout, query=False: ([[float("nan")] * 4 for _ in texts], None))
    with override_settings(BLOOM_EMBEDDINGS=ModelSpec("fake", "hash")), pytest.raises(llm.LLMInvalidOutput):
        llm.embed(["a"])
    assert captured.ended[-1].status == "parse_error" and captured.ended[-1].operation == "embeddings"
