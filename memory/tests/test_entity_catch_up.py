"""Entities catch up once the entity model is ready. `make run` trains GLiNER in the background
after the server is up (core.model_prep); facts stored meanwhile keep no EntityRun, and
memory.entities_catch_up gives them their entities when the model is there. Real GLiNER, real
MiniLM; the "not ready yet" state is an entity model directory that does not exist yet."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memory import tasks
from memory.models import EntityRun, Fact, Mention

pytestmark = pytest.mark.django_db

TEXTS = ("The learner practises the cello with their teacher Maria in Lisbon.",
         "The learner is preparing for the IELTS exam in May.",
         "The learner uses Anki on the train every morning.")


def test_facts_stored_before_the_entity_model_is_ready_get_their_entities_later(gliner_model, learner, tmp_path):
    from memory.tests.test_services import ingest

    with override_settings(BLOOM_ENTITY_MODEL=str(tmp_path / "not-trained-yet")):
        for text in TEXTS:
            ingest(learner, text)
        ids = list(Fact.objects.filter(learner=learner).values_list("pk", flat=True))
        waiting = tasks.extract_entities(ids)  # what the worker runs for the ingest's message
        assert waiting["waiting"] == len(TEXTS) and waiting["facts"] == 0
        assert tasks.entities_catch_up() is None  # nothing to do until the model is there
    assert not EntityRun.objects.exists()

    # The background step finished: the local model (the real trained GLiNER) is in place.
    done = tasks.entities_catch_up()
    assert done["facts"] == len(TEXTS) and done["failed"] == 0 and done["batches"] == 1
    assert set(EntityRun.objects.values_list("fact_id", flat=True)) == set(ids)
    found = {m.entity.canonical_name.lower() for m in Mention.objects.filter(fact_id__in=ids).select_related("entity")}
    assert any("ielts" in name for name in found), found

    # Idempotent: a second catch-up (a re-delivered message) finds nothing left and writes nothing.
    before = Mention.objects.count()
    again = tasks.entities_catch_up()
    assert again == {"facts": 0, "kept": 0, "dropped": 0, "failed": 0, "batches": 0}
    assert Mention.objects.count() == before


def test_catch_up_skips_a_fact_deleted_meanwhile(gliner_model, learner, tmp_path):
    from memory.tests.test_services import ingest

    with override_settings(BLOOM_ENTITY_MODEL=str(tmp_path / "not-trained-yet")):
        for text in TEXTS[:2]:
            ingest(learner, text)
    gone, kept = Fact.objects.filter(learner=learner).order_by("pk")
    gone.delete()
    done = tasks.entities_catch_up()
    assert done["facts"] == 1
    assert list(EntityRun.objects.values_list("fact_id", flat=True)) == [kept.pk]
