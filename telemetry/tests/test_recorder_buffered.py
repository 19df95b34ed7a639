from __future__ import annotations

import queue

import pytest
from django.test import override_settings

from core import llm
from telemetry.models import ModelCall
from telemetry.recorder import TelemetryRecorder, recorder
from telemetry.tests.factories import make_record


@pytest.mark.django_db(transaction=True)  # the writer thread commits on its own connection
def test_buffered_mode_writes_batches_off_the_call_path(fake_chat_for_telemetry):
    for i in range(5):
        fake_chat_for_telemetry.push(f"answer {i}")
    with override_settings(BLOOM_TELEMETRY_ASYNC=True), llm.call_context(service="tests.buffered") as ctx:
        results = [llm.chat([{"role": "user", "content": "hi"}]) for _ in range(5)]
        recorder.flush()
    rows = ModelCall.objects.filter(trace_id=ctx.trace_id)
    assert {r.call_id for r in rows} == {r.call_id for r in results}
    assert all(r.service == "tests.buffered" for r in rows)


def test_full_queue_drops_and_counts_instead_of_blocking(monkeypatch):
    rec = TelemetryRecorder()
    monkeypatch.setattr(rec, "_ensure_writer", lambda: None)  # no writer: the queue only fills
    rec._queue = queue.Queue(maxsize=2)
    with override_settings(BLOOM_TELEMETRY_ASYNC=True):
        for _ in range(5):
            rec.on_end(make_record())
    assert rec._queue.qsize() == 2 and rec.dropped == 3
