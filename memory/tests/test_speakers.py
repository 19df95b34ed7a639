"""Speaker-aware search (memory/speakers.py), real database + real MiniLM: a query that names a
speaker of the learner's "<Name>: ..." facts searches that speaker's statements, with the name
taken out of its vector; other queries and facts without a speaker are searched as before."""

from __future__ import annotations

import pytest

from memory import selectors, speakers
from memory.ingest import ingest_facts

pytestmark = pytest.mark.django_db

DIALOGUE = ["Maya: I bought an electric scooter! No more waiting for the bus in the cold.",
            "Tom: I bought an electric scooter, no more crowded trains for me.",
            "Maya: My new obsession is linocut printing, I spend every evening on it.",
            "Tom: We had a power cut for two hours last night.",
            "The learner practises scales every morning."]


@pytest.fixture
def dialogue(learner):
    ingest_facts(learner_id=learner.pk, items=[{"fact_type": "insight", "content": c} for c in DIALOGUE],
                 source_agent="test", service="test")
    return learner


def test_names_are_the_learners_speakers_only(dialogue):
    assert speakers.named_speakers(learner_id=dialogue.pk, query="Did Maya rely on public transport before?") == [
        "Maya"]
    assert speakers.named_speakers(learner_id=dialogue.pk, query="What did Tom's scooter replace, Maya?") == [
        "Tom", "Maya"]
    assert speakers.named_speakers(learner_id=dialogue.pk, query="Is Reykjavik worth a trip?") == []
    assert speakers.embedding_text("Did Maya say Maya's scooter works?", ["Maya"]) == (
        "Did they say their scooter works?")


def test_a_named_speaker_gets_their_own_statements(dialogue):
    hits = selectors.search_memory(learner_id=dialogue.pk, query="Did Maya rely on public transport before?",
                                   limit=10, touch=False)
    assert hits and all(h["content"].startswith("Maya:") for h in hits)
    assert "scooter" in hits[0]["content"]
    # The vector is the query's without the name: the cache holds that text.
    assert any(key[-1] == "Did they rely on public transport before?" for key in selectors._query_cache)


def test_queries_naming_no_speaker_search_everything(dialogue):
    contents = {h["content"] for h in selectors.search_memory(learner_id=dialogue.pk, query="electric scooter",
                                                              limit=10, touch=False)}
    assert {DIALOGUE[0], DIALOGUE[1]} <= contents
    assert any("scales" in h["content"] for h in selectors.search_memory(
        learner_id=dialogue.pk, query="how does the learner practise?", limit=3, touch=False))


def test_off_switch_gives_the_search_before(dialogue, monkeypatch):
    monkeypatch.setattr(selectors, "SPEAKER_AWARE", False)
    hits = selectors.search_memory(learner_id=dialogue.pk, query="Did Maya rely on public transport before?",
                                   limit=10, touch=False)
    assert any(h["content"].startswith("Tom:") for h in hits)


def test_a_speaker_is_the_exact_text_before_the_first_colon(learner):
    # On PostgreSQL the probe reads the speaker index (migration 0011), on SQLite a LIKE: both must
    # mean "the fact starts '<Name>:'". A longer name, a name inside a longer prefix, another case
    # or a name only mentioned later are not that speaker.
    contents = ["Mayan: the calendar is long.", "Maya said: not a speaker line.", "maya: lower case.",
                "Later on, Lena: mentioned only.", "Jo:no space after the colon."]
    ingest_facts(learner_id=learner.pk, items=[{"fact_type": "insight", "content": c} for c in contents],
                 source_agent="test", service="test")
    assert speakers.named_speakers(learner_id=learner.pk, query="Did Maya or Lena say it?") == []
    assert speakers.named_speakers(learner_id=learner.pk, query="What did Jo and Mayan say?") == ["Jo", "Mayan"]
    assert speakers.named_speakers(learner_id=learner.pk, query="Did " + "A" + "b" * 70 + " speak?") == []
