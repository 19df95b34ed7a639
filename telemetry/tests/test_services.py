from __future__ import annotations

import pytest
from django.db import transaction
from django.test import override_settings

from core import llm
from core.errors import ApplicationError
from telemetry.models import ModelCall
from telemetry.recorder import recorder
from telemetry.services import telemetry_anonymise_learner, telemetry_reset
from telemetry.tests.factories import make_call, make_record

pytestmark = pytest.mark.django_db


def test_record_maps_every_field():
    record = make_record(trace_id="tr1", parent_call_id="p1", learner_id=3, conversation_id=9, agent="coach",
                         loop_iteration=2, service="coaching.turn", time_to_first_token_s=0.02,
                         finish_reason="stop", extra={"attempt": 1, "dropped_spans": 0})
    recorder.on_end(record)
    row = ModelCall.objects.get(call_id=record.call_id)
    assert (row.trace_id, row.parent_call_id, row.learner_id, row.conversation_id) == ("tr1", "p1", 3, 9)
    assert (row.agent, row.loop_iteration, row.service, row.attempt) == ("coach", 2, "coaching.turn", 1)
    assert row.duration_ms == pytest.approx(100.0) and row.time_to_first_token_ms == pytest.approx(20.0)
    assert row.extra == {"dropped_spans": 0}


@override_settings(BLOOM_TELEMETRY_CONTENT=True, BLOOM_TELEMETRY_CONTENT_MAX=20)
def test_content_stored_truncated_when_allowed():
    row = make_call(response="x" * 100)
    assert row.prompt_content.startswith('[{"role": "user"')
    assert row.response_content == "x" * 20 + "…[truncated]"


@override_settings(BLOOM_TELEMETRY_CONTENT=False)
def test_content_not_stored_when_disabled():
    row = make_call(response="secret learner text")
    row.refresh_from_db()
    assert row.prompt_content == "" and row.response_content == ""


def test_recorder_failure_never_breaks_the_callers_transaction(caplog):
    record = make_record()
    with transaction.atomic():
        recorder.on_end(record)
        recorder.on_end(record)  # same call_id twice: the INSERT fails (unique), inside a savepoint
        # The caller's transaction is still usable on PostgreSQL.
        assert ModelCall.objects.filter(call_id=record.call_id).count() == 1
    assert "could not record model call" in caplog.text


def test_call_succeeds_when_the_recorder_cannot_write(fake_chat_for_telemetry, monkeypatch):
    import telemetry.services

    def explode(**kwargs):
        raise RuntimeError("database is on fire")

    monkeypatch.setattr(telemetry.services, "telemetry_record_call", explode)
    fake_chat_for_telemetry.push("answer despite the fire")
    assert llm.chat([{"role": "user", "content": "hi"}]).text == "answer despite the fire"
    assert ModelCall.objects.count() == 0


def test_reset_requires_exact_confirmation():
    make_call()
    make_call()
    for wrong in ("", "delete", "yes"):
        with pytest.raises(ApplicationError):
            telemetry_reset(confirm=wrong)
    assert ModelCall.objects.count() == 2
    assert telemetry_reset(confirm="DELETE") == 2
    assert ModelCall.objects.count() == 0


@override_settings(BLOOM_TELEMETRY_CONTENT=True)
def test_anonymise_learner_unlinks_rows_and_content():
    mine = make_call(learner_id=7, conversation_id=70)
    other = make_call(learner_id=8)
    assert telemetry_anonymise_learner(learner_id=7) == 1
    mine.refresh_from_db()
    other.refresh_from_db()
    assert (mine.learner_id, mine.conversation_id, mine.prompt_content) == (None, None, "")
    assert other.learner_id == 8 and other.prompt_content
