"""Background model calls yield to learners' turns (core.llm.priority).

The control-flow tests use the scripted FAKE provider and a scripted probe; the last test runs the
real llama.cpp model with the real telemetry recorder, so the preempted generation and its restart
are real rows. The probe the application registers (coaching.selectors.turns_in_flight) is tested
in coaching/tests/test_selectors_in_flight.py."""

from __future__ import annotations

import itertools

import pytest
from django.test import override_settings

from core import llm
from core.llm import priority
from core.llm.providers.fake import Scripted

MSG = [{"role": "user", "content": "hi"}]


class ScriptedProbe:
    """A FAKE probe: answers from a script of busy/idle values, then `then` forever."""

    def __init__(self, script: list[bool], then: bool = False):
        self._answers = itertools.chain(script, itertools.repeat(then))
        self.calls = 0

    def __call__(self) -> bool:
        self.calls += 1
        return next(self._answers)


@pytest.fixture
def probe():
    """Install a scripted probe for the test; restore the application's probe afterwards."""
    previous = priority._probe
    installed: list[ScriptedProbe] = []

    def install(script: list[bool], then: bool = False) -> ScriptedProbe:
        p = ScriptedProbe(script, then)
        priority.register_interactive_probe(p)
        installed.append(p)
        return p

    with override_settings(BLOOM_LLM_YIELD=True, BLOOM_LLM_YIELD_POLL=0.0, BLOOM_LLM_YIELD_MAX_WAIT=5.0):
        yield install
    priority.register_interactive_probe(previous)


def test_interactive_calls_never_ask_the_probe(fake_chat, captured, probe):
    p = probe([], then=True)
    fake_chat.push(Scripted(text="straight through"))
    assert llm.chat(MSG).text == "straight through"
    assert p.calls == 0 and [r.status for r in captured.ended] == ["ok"]


def test_background_call_waits_while_a_turn_runs_then_runs(fake_chat, captured, probe):
    p = probe([True, True, False])  # two polls busy, then idle, then idle between pieces
    fake_chat.push(Scripted(text="one two three"))
    with llm.call_context(priority="background"):
        result = llm.chat(MSG)
    assert result.text == "one two three"
    assert [r.status for r in captured.ended] == ["ok"]
    assert captured.ended[0].extra["priority"] == "background"
    assert captured.ended[0].extra["yielded_s"] > 0
    assert p.calls >= 3


def test_background_generation_is_preempted_recorded_and_restarted(fake_chat, captured, probe):
    # before start: idle; first piece: idle; second piece: a turn started → preempted;
    # then idle for the wait and the restart.
    probe([False, False, True])
    fake_chat.push(Scripted(text="first attempt words"), Scripted(text="second attempt"))
    with llm.call_context(priority="background", service="tests.priority") as ctx:
        result = llm.chat(MSG)
    assert result.text == "second attempt"
    statuses = [r.status for r in captured.ended]
    assert statuses == ["preempted", "ok"]
    assert captured.ended[0].error_type == "LLMPreempted"
    assert all(r.context.trace_id == ctx.trace_id for r in captured.ended)
    assert fake_chat.pending() == 0


def test_yielding_is_bounded_by_the_budget(fake_chat, captured, probe):
    """A learner who never stops typing cannot starve memory forever: past the budget it runs."""
    probe([], then=True)
    fake_chat.push(Scripted(text="ran anyway"))
    with override_settings(BLOOM_LLM_YIELD_POLL=0.05, BLOOM_LLM_YIELD_MAX_WAIT=0.2), \
            llm.call_context(priority="background"):
        result = llm.chat(MSG)
    assert result.text == "ran anyway"
    assert [r.status for r in captured.ended] == ["ok"]
    assert captured.ended[0].extra["yielded_s"] >= 0.2


def test_yield_off_by_setting(fake_chat, captured, probe):
    p = probe([], then=True)
    fake_chat.push(Scripted(text="own hardware"))
    with override_settings(BLOOM_LLM_YIELD=False), llm.call_context(priority="background"):
        assert llm.chat(MSG).text == "own hardware"
    assert p.calls == 0


def test_a_broken_probe_does_not_stop_background_work(fake_chat, captured, probe):
    def broken() -> bool:
        raise RuntimeError("database gone")

    priority.register_interactive_probe(broken)
    fake_chat.push(Scripted(text="still done"))
    with llm.call_context(priority="background"):
        assert llm.chat(MSG).text == "still done"


@pytest.mark.django_db
def test_real_llamacpp_generation_is_preempted_and_restarted(llamacpp_model, probe):
    """Real model, real recorder: the first generation stops mid-way when the probe reports a turn,
    the restart completes, and both are telemetry rows in one trace."""
    from telemetry.models import ModelCall

    probe([False, False, False, True])  # start; two pieces; then "a turn started"
    schema = {"type": "object", "properties": {"fruit": {"type": "string"}}, "required": ["fruit"]}
    with llm.call_context(priority="background", service="tests.priority") as ctx:
        result = llm.chat([{"role": "user", "content": "Name one fruit."}], schema=schema,
                          options={"temperature": 0.0, "seed": 7, "max_tokens": 40})
    assert isinstance(result.parsed.get("fruit"), str)
    rows = list(ModelCall.objects.filter(trace_id=ctx.trace_id).order_by("created_at", "id"))
    assert [r.status for r in rows] == ["preempted", "ok"]
    assert rows[0].error_type == "LLMPreempted" and rows[1].output_tokens > 0
