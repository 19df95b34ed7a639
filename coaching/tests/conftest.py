import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from coaching import services
from core.env import ModelSpec
from core.identity import services as identity_services


@pytest.fixture
def fake_model():
    """The FAKE scripted model (control-flow tests only): push replies/errors in the test."""
    from core.llm.providers import fake_chat
    from core.llm.resilience import reset_breakers

    fake = fake_chat()
    fake.reset()
    fake.separate("reader")  # the reader's proposals: scripted with push_to("reader", …), else none
    reset_breakers()
    with override_settings(BLOOM_LLM=ModelSpec("fake", "scripted"), BLOOM_READING_LLM=ModelSpec("fake", "reader"),
                           BLOOM_LLM_RETRIES=0):
        yield fake
    fake.reset()
    reset_breakers()


def make_client(name="acme"):
    client = identity_services.api_client_create(name=name)
    _, raw = identity_services.api_token_create(client=client)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client, api


@pytest.fixture
def api(db):
    return make_client()


def onboarded_learner(client, *, goal="learn to swim", category="sport", arm="coach"):
    learner = services.learner_create(client=client, study_arm=arm)
    services.profile_update(learner=learner, primary_goal=goal, goal_category=category, weekly_hours=3,
                            best_time="evening", confidence=6)
    return learner
