"""Memory test fixtures. Learners and messages come from `core.identity`, the layer below memory
(memory code never imports coaching; tests follow the same rule). Real MiniLM embeddings unless a
test says otherwise."""

from __future__ import annotations

import itertools

import pytest
from django.test import override_settings

from core.env import ModelSpec
from core.identity.models import ApiClient, Conversation, Learner, Message
from core.llm import assets

_counter = itertools.count(1)


@pytest.fixture
def make_learner(db):
    def make(client=None, name: str = "learner"):
        client = client or ApiClient.objects.create(name=f"client-{next(_counter)}")
        return Learner.objects.create(client=client, display_name=name)

    return make


@pytest.fixture
def learner(make_learner):
    return make_learner()


@pytest.fixture
def make_message(db):
    def make(learner, content: str, *, role: str = "learner", conversation=None):
        conversation = conversation or Conversation.objects.create(learner=learner)
        return Message.objects.create(conversation=conversation, role=role, content=content)

    return make


@pytest.fixture
def fake_chat():
    """The scripted FAKE chat provider (parsing/control-flow tests only). Embeddings stay real."""
    from core.llm.providers import fake_chat as get_fake
    from core.llm.resilience import reset_breakers

    fake = get_fake()
    fake.reset()
    reset_breakers()
    with override_settings(BLOOM_LLM=ModelSpec("fake", "scripted"), BLOOM_LLM_BACKOFF=0.001, BLOOM_LLM_RETRIES=0):
        yield fake
    fake.reset()
    reset_breakers()


@pytest.fixture(scope="session")
def real_chat_model():
    path = assets.chat_model_path("qwen2.5-coder-0.5b-instruct-q4")
    if not path.is_file():
        pytest.skip(f"chat model {path} not assembled: run `python manage.py bloom_models`")
    return path


@pytest.fixture(scope="session")
def gliner_model():
    path = assets.gliner_model_dir()
    if not path.is_dir() or not any(path.glob("*.json")):
        pytest.skip(f"GLiNER model {path} not trained yet: run `python manage.py bloom_models`")
    return path


@pytest.fixture(autouse=True)
def access_marks_written_in_the_search():
    """Search access marks are written behind by a thread in production; inside a test's
    transaction that thread could not see the rows, so tests write them in the search itself.
    test_write_behind.py covers the thread with committed rows."""
    with override_settings(BLOOM_MEMORY_ACCESS_FLUSH_SECONDS=0):
        yield
