"""Entity extraction of a whole batch: one outbox message naming its facts, one batched GLiNER call,
one transaction for the graph.

- The set-wise writer's bookkeeping (scripted spans, no model: control flow) gives the graph that
  recording the facts one by one gives, in a fixed number of statements.
- With the real GLiNER model: the batched call finds what one call per text finds; the task skips
  facts that are gone and writes nothing twice when its message is delivered again; a write that
  dies half-way leaves nothing behind and the re-delivery completes it.
- With a real Celery worker over the real broker: a batch ingested through the outbox ends with
  every surviving fact's entities, a deleted fact skipped."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from core.llm import call_context, embed, entities, entities_many
from core.outbox.models import OutboxMessage
from core.outbox.services import outbox_resend_lost
from memory import conf, rules, tasks
from memory.batch import ingest_batch
from memory.models import Entity, EntityRun, Fact, FactHistory, Mention, Relation
from memory.services import entities as entity_service
from memory.services.entities import FactSpans, entities_record, entities_record_many
from telemetry.models import ModelCall

pytestmark = pytest.mark.django_db

TEXTS = [
    "Maya uses Anki to study Spanish.",
    "Tom also uses anki for Spanish.",
    "Maya met Tom in Madrid.",
    "Madrid, Madrid and Anki again.",
]
WORDS = [
    [("Maya", "person"), ("Anki", "tool"), ("Spanish", "skill")],
    [("Tom", "person"), ("anki", "tool"), ("Spanish", "skill")],
    [("Maya", "person"), ("Tom", "person"), ("Madrid", "place")],
    [("Madrid", "place"), ("Anki", "tool")],
]


def _fact(learner, text: str) -> Fact:
    return Fact.objects.create(learner=learner, fact_type="insight", content=text,
                               content_hash=rules.content_hash(text), last_accessed_at=timezone.now())


def _spans(text: str, words) -> list[rules.Span]:
    return [rules.Span(text.index(w), text.index(w) + len(w), w, label, 0.9) for w, label in words]


def _scripted(fact: Fact, words) -> FactSpans:
    spans = _spans(fact.content, words)
    if "Madrid, Madrid" in fact.content:
        second = fact.content.index("Madrid", 1)
        spans += [rules.Span(second, second + 6, "Madrid", "place", 0.8),  # the same entity again
                  spans[0],  # the very same span twice: one mention
                  rules.Span(0, 4, "Zeus", "person", 0.9)]  # not at those offsets: dropped, counted
    return FactSpans(fact.pk, spans)


def _graph(learner) -> dict:
    """The learner's entity graph with facts named by their text (the two learners' ids differ)."""
    return {
        "entities": sorted(Entity.objects.filter(learner=learner)
                           .values_list("canonical_name", "label", "display_name", "mention_count")),
        "relations": sorted(Relation.objects.filter(learner=learner).values_list(
            "entity_a__canonical_name", "entity_b__canonical_name", "weight", "evidence_fact__content")),
        "mentions": sorted(Mention.objects.filter(fact__learner=learner).values_list(
            "fact__content", "start", "end", "text", "entity__canonical_name")),
        "runs": sorted(EntityRun.objects.filter(fact__learner=learner).values_list("fact__content", "kept", "dropped")),
        "history": FactHistory.objects.filter(fact__learner=learner, change="entities").count(),
    }


def test_batch_graph_equals_recording_one_by_one(make_learner, django_assert_max_num_queries):
    graphs = []
    for batched in (True, False):
        learner = make_learner()
        # An entity and a relation the learner already has: the batch adds to them.
        earlier = _fact(learner, "Anki helps with Spanish.")
        entities_record(fact_id=earlier.pk, spans=_spans(earlier.content, [("Anki", "tool"), ("Spanish", "skill")]),
                        dropped=0)
        found = [_scripted(_fact(learner, t), w) for t, w in zip(TEXTS, WORDS, strict=True)]
        if batched:
            # A fixed number of statements, whatever the batch size: the facts locked, their runs,
            # entities read / inserted / read back, mentions read / inserted, counts, relations
            # inserted / read / updated, runs, history rows, and the savepoint pair.
            with django_assert_max_num_queries(15):
                runs = entities_record_many(found=found)
            assert len(runs) == len(TEXTS)
        else:
            for item in found:
                entities_record_many(found=[item])
        graphs.append(_graph(learner))
    assert graphs[0] == graphs[1]
    graph = graphs[0]
    assert ("anki", "tool", "Anki", 4) in graph["entities"]  # earlier, 1, 2 and 4 (display: first form)
    assert ("madrid", "place", "Madrid", 3) in graph["entities"]  # fact 3 once, fact 4 twice
    assert ("anki", "spanish", 3.0, "Tom also uses anki for Spanish.") in graph["relations"]  # evidence: the last
    assert ("Madrid, Madrid and Anki again.", 4, 1) in graph["runs"]  # 4 kept (one repeated), Zeus dropped
    assert graph["history"] == len(TEXTS) + 1


def test_gone_and_done_facts_are_skipped(learner):
    f1, f2, f3 = (_fact(learner, t) for t in TEXTS[:3])
    entities_record(fact_id=f1.pk, spans=_spans(f1.content, WORDS[0]), dropped=0)
    f3.delete()
    runs = entities_record_many(found=[_scripted(f, w) for f, w in zip((f1, f2, f3), WORDS, strict=False)]
                                + [_scripted(f2, WORDS[1])])  # f2 twice in one call: recorded once
    assert set(runs) == {f2.pk}
    assert Mention.objects.filter(fact=f1).count() == 3 and Mention.objects.filter(fact=f2).count() == 3
    assert Entity.objects.get(canonical_name="anki").mention_count == 2


def test_a_write_that_dies_half_way_leaves_nothing_and_the_redelivery_completes(learner, monkeypatch):
    facts = [_fact(learner, t) for t in TEXTS]
    found = [_scripted(f, w) for f, w in zip(facts, WORDS, strict=True)]

    def killed(*args, **kwargs):
        raise RuntimeError("worker killed")

    monkeypatch.setattr(entity_service, "_relations_add", killed)
    with pytest.raises(RuntimeError, match="killed"):
        entities_record_many(found=found)
    assert not Mention.objects.exists() and not Entity.objects.exists() and not EntityRun.objects.exists()
    monkeypatch.undo()
    assert len(entities_record_many(found=found)) == len(TEXTS)
    assert Relation.objects.filter(learner=learner).count() == 9  # 3 + 2 new + 3 + 1 distinct pairs


def test_resend_check_reads_a_list_of_fact_ids(learner, broker_down):
    """`memory.resend_lost` on batch messages: one whose facts all ran (or are gone) is done; one with
    a fact still lacking its run is sent again (here to a broker that is down: pending again)."""
    done, gone, waiting = (_fact(learner, t) for t in TEXTS[:3])
    entities_record(fact_id=done.pk, spans=[], dropped=0)
    gone_id = gone.pk
    gone.delete()
    sent = timezone.now() - timedelta(minutes=30)
    # Swept oldest first, and a sweep stops at the broker failure: the lost one is sent last.
    legacy = OutboxMessage.objects.create(task_name="memory.extract_entities", args=[done.pk],
                                          queue="memory", sent_at=sent, attempts=1)  # queued before batching
    finished = OutboxMessage.objects.create(task_name="memory.extract_entities", args=[[done.pk, gone_id]],
                                            queue="memory", sent_at=sent + timedelta(seconds=1), attempts=1)
    lost = OutboxMessage.objects.create(task_name="memory.extract_entities", args=[[done.pk, waiting.pk]],
                                        queue="memory", sent_at=sent + timedelta(seconds=2), attempts=1)
    assert tasks._entities_done([[done.pk, gone_id], [done.pk, waiting.pk], done.pk]) == [[done.pk, gone_id], done.pk]
    out = outbox_resend_lost(done_checks=tasks.RESENDABLE_TASKS)
    assert out["checked"] == 3
    for row in (finished, lost, legacy):
        row.refresh_from_db()
    assert legacy.sent_at == sent and finished.sent_at == sent + timedelta(seconds=1)
    assert lost.sent_at is None and lost.last_error  # re-sent; the broker was down, so pending for the relay


# --- the real GLiNER model -------------------------------------------------------------------------
def test_batched_gliner_finds_what_one_call_per_text_finds_in_one_call(gliner_model):
    texts = [*TEXTS, "   ", "The learner practises Python with their coach Sam before 9am."]
    labels, threshold = conf.entity_labels(), conf.entity_threshold()
    with call_context(service="tests.entities_many") as ctx:
        many = entities_many(texts, labels, threshold=threshold)
    single = [entities(t, labels, threshold=threshold) for t in texts]
    assert [[(s.start, s.end, s.text, s.label) for s in spans] for spans in many] == \
        [[(s.start, s.end, s.text, s.label) for s in spans] for spans in single]
    assert any(many), "the model should find something in these texts"
    assert many[4] == []  # blank: not sent
    row = ModelCall.objects.get(trace_id=ctx.trace_id)  # one model call for the whole batch
    assert row.operation == "entities" and row.extra["n_texts"] == len(texts) - 1


def _ingest(learner, contents):
    items = [{"fact_type": "insight", "content": c, "embedding": v}
             for c, v in zip(contents, embed(list(contents)), strict=True)]
    return ingest_batch(learner_id=learner.pk, items=items, source_agent="test", service="test")


BATCH = ["Maya uses Anki and Duolingo to study Spanish for the DELE exam.",
         "Tom practises Clair de Lune with Mrs. Okafor every Sunday.",
         "My coach Sam recommended the Python course on Coursera.",
         "Maya is moving to Madrid in June."]


def test_task_extracts_a_batch_skips_a_gone_fact_and_is_idempotent(gliner_model, learner):
    result = _ingest(learner, BATCH)
    row = OutboxMessage.objects.get(task_name="memory.extract_entities")
    assert row.args == [result.created]
    Fact.objects.filter(pk=result.created[1]).delete()  # forgotten before the task ran
    out = tasks.extract_entities(*row.args)
    assert out["facts"] == 3 and out["skipped"] == 1
    kept = list(Fact.objects.filter(pk__in=result.created).order_by("pk"))
    expected = entities_many([f.content for f in kept], conf.entity_labels(), threshold=conf.entity_threshold())
    for fact, spans in zip(kept, expected, strict=True):
        want, _ = rules.validate_spans(fact.content, list(spans), labels=conf.entity_labels())
        assert sorted(Mention.objects.filter(fact=fact).values_list("start", "end", "text")) == \
            sorted({(s.start, s.end, s.text) for s in want})
        for m in Mention.objects.filter(fact=fact):
            assert fact.content[m.start:m.end] == m.text
    assert out["kept"] == sum(EntityRun.objects.filter(fact__in=kept).values_list("kept", flat=True))
    before = _graph(learner)
    assert tasks.extract_entities(*row.args) is None  # delivered again: nothing to do
    assert _graph(learner) == before


def test_malformed_output_for_one_fact_costs_only_that_fact(gliner_model, learner, monkeypatch):
    """The real GLiNER model, with its provider made to fail on one text as a malformed answer would
    (LLMInvalidOutput, not transient): the batch is split until the bad fact stands alone; every
    other fact gets the entities the real model finds, and the task reports one failure."""
    from core.llm.providers import entity_provider
    from core.llm.types import LLMInvalidOutput

    result = _ingest(learner, BATCH)
    row = OutboxMessage.objects.get(task_name="memory.extract_entities")
    bad = Fact.objects.get(pk=result.created[2])
    provider = entity_provider()
    real = provider.predict_many

    def predict_many(model, texts, labels, threshold=None):
        if bad.content in texts:
            raise LLMInvalidOutput("gliner: malformed spans")
        return real(model, texts, labels, threshold)

    monkeypatch.setattr(provider, "predict_many", predict_many)
    out = tasks.extract_entities(*row.args)
    assert out["failed"] == 1 and out["facts"] == len(result.created) - 1
    assert not EntityRun.objects.filter(fact=bad).exists()
    assert EntityRun.objects.filter(fact_id__in=result.created).count() == len(result.created) - 1
    monkeypatch.undo()
    assert tasks.extract_entities(*row.args)["facts"] == 1  # delivered again: the bad fact's turn comes


# --- a real Celery worker -----------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_real_worker_extracts_a_batch_through_the_outbox(gliner_model, real_celery_worker, learner):
    with transaction.atomic():
        result = _ingest(learner, BATCH)
        # Forgotten in the same transaction: the one message published on commit names a fact
        # that is gone by the time the worker fetches it.
        Fact.objects.filter(pk=result.created[1]).delete()
    live = [result.created[0], *result.created[2:]]
    deadline = time.monotonic() + 240
    while EntityRun.objects.filter(fact_id__in=live).count() < len(live):
        assert time.monotonic() < deadline, "the worker did not extract the batch's entities"
        time.sleep(0.5)
    row = OutboxMessage.objects.get(task_name="memory.extract_entities")
    assert row.args == [result.created] and row.sent_at is not None
    assert Mention.objects.filter(fact_id__in=live).exists()
    for m in Mention.objects.filter(fact_id__in=live).select_related("fact"):
        assert m.fact.content[m.start:m.end] == m.text
    # One batched model call for the three live facts, attributed to the learner.
    call = ModelCall.objects.get(service="memory.extract_entities", operation="entities", learner_id=learner.pk)
    assert call.status == "ok" and call.extra["n_texts"] == len(live)
