from __future__ import annotations

import pytest
from django.test import override_settings

from core.env import ModelSpec
from core.llm import assets, register_observer, unregister_observer
from core.llm.resilience import reset_breakers

CHAT_MODEL = "qwen2.5-coder-0.5b-instruct-q4"


class CapturingObserver:
    """Collects the CallRecords the layer emits (a plain list, no database)."""

    def __init__(self):
        self.started = []
        self.ended = []

    def on_start(self, record):
        self.started.append(record)

    def on_end(self, record):
        self.ended.append(record)


@pytest.fixture
def captured():
    observer = CapturingObserver()
    register_observer(observer)
    yield observer
    unregister_observer(observer)


@pytest.fixture(autouse=True)
def _fresh_breakers():
    reset_breakers()
    yield
    reset_breakers()


@pytest.fixture
def fake_chat():
    """The scripted FAKE chat provider selected as BLOOM_LLM, with quick backoff."""
    from core.llm.providers import fake_chat as get_fake

    fake = get_fake()
    fake.reset()
    with override_settings(BLOOM_LLM=ModelSpec("fake", "scripted"), BLOOM_LLM_BACKOFF=0.001,
                           BLOOM_LLM_RETRIES=2, BLOOM_LLM_BREAKER_THRESHOLD=5, BLOOM_LLM_BREAKER_COOLDOWN=30):
        yield fake
    fake.reset()


@pytest.fixture(scope="session")
def chat_model_file():
    path = assets.chat_model_path(CHAT_MODEL)
    if not path.is_file():
        pytest.skip(f"chat model {path} not assembled: run `python manage.py bloom_models`")
    return path


@pytest.fixture
def llamacpp_model(chat_model_file):
    with override_settings(BLOOM_LLM=ModelSpec("llamacpp", CHAT_MODEL), BLOOM_LLM_BACKOFF=0.001):
        yield CHAT_MODEL
