"""Admin pages render (read-only, surprise queue, entity graph) and beat schedules are registered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory.apps import PERIODIC_TASKS, register_periodic_tasks
from memory.models import Entity, Fact, Relation

pytestmark = pytest.mark.django_db


def test_periodic_tasks_registered_idempotently():
    from django_celery_beat.models import PeriodicTask

    register_periodic_tasks()
    register_periodic_tasks()
    tasks = dict(PeriodicTask.objects.filter(task__startswith="memory.").values_list("task", "interval__every"))
    assert tasks == {task: seconds for _, task, seconds in PERIODIC_TASKS}


def test_admin_pages(client, learner):
    staff = get_user_model().objects.create_superuser("admin", "a@example.org", "pw-123456")
    client.force_login(staff)
    old = Fact.objects.create(learner=learner, fact_type="preference", content="Prefers mornings.", content_hash="a",
                              last_accessed_at=timezone.now())
    Fact.objects.create(learner=learner, fact_type="preference", content="Prefers evenings.", content_hash="b",
                        last_accessed_at=timezone.now(), surprise=True, conflicts_with=old,
                        surprise_reason="opposite:morning/evening")
    a = Entity.objects.create(learner=learner, canonical_name="anki", label="tool", display_name="Anki")
    b = Entity.objects.create(learner=learner, canonical_name="spanish", label="skill", display_name="Spanish")
    Relation.objects.create(learner=learner, entity_a=a, entity_b=b, weight=3)
    assert client.get("/admin/memory/fact/?tier__exact=hot").status_code == 200
    queue = client.get("/admin/memory/surprisefact/")
    assert queue.status_code == 200 and b"Prefers evenings." in queue.content and b"Prefers mornings." in queue.content
    graph = client.get(f"/admin/memory/entity/graph/{learner.pk}/")
    assert graph.status_code == 200 and b"Anki" in graph.content and b"3.0" in graph.content
    assert client.get(f"/admin/memory/fact/{old.pk}/change/").status_code == 200
    assert client.get("/admin/memory/fact/add/").status_code == 403  # read-only


def test_eval_set_is_well_formed():
    data = json.loads((Path(__file__).resolve().parents[1] / "eval_data" / "retrieval_v1.json").read_text())
    convs = {c["id"]: c["turns"] for c in data["conversations"]}
    assert len(data["questions"]) >= 20
    for q in data["questions"]:
        assert 0 <= q["evidence"] < len(convs[q["conversation"]]) and q["q"].strip()
