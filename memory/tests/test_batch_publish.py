"""A batch's follow-up work is ONE entity message naming all its new facts (plus a due summary),
published over one connection after commit (memory/batch.py), and a broker outage leaves it
pending for the relay, as the outbox promises."""

from __future__ import annotations

import numpy as np
import pytest
from celery import current_app

from core.outbox.models import OutboxMessage
from core.outbox.services import outbox_relay
from memory.batch import ingest_batch
from memory.models import Fact

CONTENTS = ["Maya: We adopted a beagle called Biscuit.", "Tom: My pottery class is on Tuesdays.",
            "Maya: The DELE exam is in March.", "Tom: I ran 10 km on Sunday.", "Maya: I painted the kitchen green."]


def _items():
    # Orthogonal vectors: no item is a near duplicate of another, every one is created.
    eye = np.eye(384, dtype=float)
    return [{"fact_type": "insight", "content": c, "embedding": eye[i].tolist(), "external_id": f"t-{i}"}
            for i, c in enumerate(CONTENTS)]


@pytest.fixture
def connections(monkeypatch):
    # Built once per process, and building it asks for a connection object: not a publish.
    current_app.amqp.send_task_message
    opened: list[int] = []
    real = current_app.connection_for_write

    def counting(*args, **kwargs):
        opened.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(current_app, "connection_for_write", counting)
    return opened


@pytest.mark.django_db(transaction=True)
def test_a_batch_publishes_one_entity_message_for_all_its_facts(learner, connections, monkeypatch):
    published: list[tuple[str, list]] = []
    real_send = current_app.send_task
    monkeypatch.setattr(current_app, "send_task",
                        lambda name, **kw: published.append((name, kw["args"])) or real_send(name, **kw))
    result = ingest_batch(learner_id=learner.pk, items=_items(), source_agent="test", service="test")
    assert len(result.created) == len(CONTENTS)
    row = OutboxMessage.objects.get(task_name="memory.extract_entities")
    assert row.args == [result.created] and row.sent_at is not None and row.attempts == 1  # sent once
    # One entity publish for five facts; the summary the batch made due goes over the same connection.
    assert [p for p in published if p[0] == "memory.extract_entities"] == [("memory.extract_entities",
                                                                             [result.created])]
    assert [name for name, _ in published if name != "memory.extract_entities"] == ["memory.summarize"]
    assert len(connections) == 1
    # A batch that creates nothing (all duplicates) has nothing to extract: no message, no connection.
    again = ingest_batch(learner_id=learner.pk, items=_items(), source_agent="test", service="test")
    assert again.duplicates == len(CONTENTS) and len(connections) == 1
    assert OutboxMessage.objects.filter(task_name="memory.extract_entities").count() == 1


@pytest.mark.django_db(transaction=True)
def test_broker_down_leaves_the_batch_pending_and_the_relay_sends_it(learner, broker_down, monkeypatch):
    result = ingest_batch(learner_id=learner.pk, items=_items(), source_agent="test", service="test")
    assert Fact.objects.filter(learner=learner).count() == len(CONTENTS)  # the facts are stored
    pending = OutboxMessage.objects.filter(task_name="memory.extract_entities", sent_at__isnull=True)
    assert list(pending.values_list("args", flat=True)) == [[result.created]]
    assert pending.exclude(last_error="").exists()
    monkeypatch.undo()  # the broker is back
    assert outbox_relay() >= 1
    assert not pending.exists()
