"""Work a broker lost after accepting it is sent again (`memory.resend_lost`, every 10 minutes).

The loss is set up as the state it leaves behind: an outbox row marked sent long ago and no run
marker (the broker's queue is gone — Redis without persistence restarting does exactly this). The
re-send goes through the real Redis broker to a real Celery worker; the chat model is the scripted
FAKE (this tests the recovery path, not extraction quality)."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from core.llm.providers.fake import Scripted
from core.outbox.models import OutboxMessage
from core.outbox.services import RESEND_MAX_SENDS, outbox_resend_lost
from memory.models import ExtractionRun, Fact
from memory.tasks import RESENDABLE_TASKS, resend_lost


def _sent_row(message_id: int, *, minutes_ago: float, attempts: int = 1) -> OutboxMessage:
    return OutboxMessage.objects.create(task_name="memory.extract_facts", args=[message_id], queue="memory",
                                        dedup_key=f"extract:{message_id}", attempts=attempts,
                                        sent_at=timezone.now() - timedelta(minutes=minutes_ago))


@pytest.mark.django_db(transaction=True)
def test_lost_extraction_is_sent_again_and_runs_once(fake_chat, learner, make_message, real_celery_worker):
    fake_chat.default = lambda request: Scripted(text=json.dumps(
        {"facts": [{"fact_type": "preference", "content": "The learner studies on the train.", "confidence": 0.8}]}))
    lost = make_message(learner, "I always study on the train to work.")
    done = make_message(learner, "Already handled.")
    hopeless = make_message(learner, "Sent three times already.")
    recent = make_message(learner, "Probably still queued.")
    lost_row = _sent_row(lost.pk, minutes_ago=20)
    _sent_row(done.pk, minutes_ago=20)
    ExtractionRun.objects.create(message_id=done.pk, learner_id=learner.pk)
    _sent_row(hopeless.pk, minutes_ago=20, attempts=RESEND_MAX_SENDS)
    _sent_row(recent.pk, minutes_ago=1)

    out = resend_lost()
    assert out == {"checked": 3, "resent": 1, "gave_up": 1}
    lost_row.refresh_from_db()
    assert lost_row.attempts == 2 and lost_row.sent_at > timezone.now() - timedelta(minutes=1)

    deadline = time.monotonic() + 60
    while not ExtractionRun.objects.filter(message_id=lost.pk).exists():
        assert time.monotonic() < deadline, "the re-sent extraction did not run"
        time.sleep(0.2)
    assert Fact.objects.filter(learner=learner, source_message_id=lost.pk).count() == 1
    assert not ExtractionRun.objects.filter(message_id__in=[hopeless.pk, recent.pk]).exists()

    # A later sweep leaves the recovered row alone: its work is done now.
    outbox_resend_lost(done_checks=RESENDABLE_TASKS, now=timezone.now() + timedelta(minutes=30))
    lost_row.refresh_from_db()
    assert lost_row.attempts == 2


@pytest.mark.django_db
def test_broker_down_leaves_the_row_pending_for_the_relay(learner, make_message, broker_down):
    message = make_message(learner, "I like podcasts.")
    row = _sent_row(message.pk, minutes_ago=30)
    out = resend_lost()
    row.refresh_from_db()
    assert out["resent"] == 0 and row.sent_at is None and row.attempts == 2 and row.last_error
