import pytest
from django.test import override_settings

from core.env import ModelSpec


@pytest.fixture
def fake_chat_for_telemetry():
    """The scripted FAKE chat provider (control flow only)."""
    from core.llm.providers import fake_chat

    fake = fake_chat()
    fake.reset()
    with override_settings(BLOOM_LLM=ModelSpec("fake", "scripted")):
        yield fake
    fake.reset()


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("staff", "s@example.org", "pw-staff-123", is_staff=True)


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client
