import pytest
from django.test import override_settings

from core.env import ModelSpec


@pytest.fixture
def fake_llm():
    """The process-wide SCRIPTED FAKE chat model (control flow and parsing only) as the default
    model, fake hashing embeddings, and no facade retries."""
    from core.llm.providers import fake_chat
    from core.llm.resilience import reset_breakers

    fake = fake_chat()
    fake.reset()
    fake.separate("reader")  # the reader's proposals: none unless a test scripts them
    reset_breakers()
    with override_settings(BLOOM_LLM=ModelSpec("fake", "scripted"), BLOOM_EMBEDDINGS=ModelSpec("fake", "hashing"),
                           BLOOM_READING_LLM=ModelSpec("fake", "reader"), BLOOM_LLM_RETRIES=0):
        yield fake
    fake.reset()
    reset_breakers()
