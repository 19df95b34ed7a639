"""Fixtures for the reliability/security suite: two API clients with a full set of objects each
(learner, profile, conversation, messages, turn, plan + session, check-in, memory fact, summary,
entity, token), a staff user, and helpers. Client B's free text carries MARKER so a test can
prove that nothing of B's ever appears in a response to A."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

MARKER = "ZZSECRETB"


@dataclass
class Tenant:
    client: object
    token: object
    raw: str
    api: APIClient
    learner: object
    conversation: object
    message: object
    reply: object
    turn: object
    session: object
    fact: object
    ids: dict = field(default_factory=dict)


def make_tenant(name: str, *, text: str = "") -> Tenant:
    from coaching import services
    from coaching.models import CheckIn, Message, MessageStatus, Role, Turn
    from core.identity import services as identity_services
    from memory.models import Entity, Fact, Summary

    client = identity_services.api_client_create(name=name)
    token, raw = identity_services.api_token_create(client=client, name=f"{name}-main")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    learner = services.learner_create(client=client, display_name=f"{name} {text}".strip())
    services.profile_update(learner=learner, primary_goal=f"learn to swim {text}".strip(), goal_category="sport",
                            weekly_hours=3, best_time="evening", confidence=6)
    conversation = services.conversation_start(learner=learner)
    message = Message.objects.create(conversation=conversation, role=Role.LEARNER, content=f"hello {text}",
                                     status=MessageStatus.ANSWERED, trace_id=f"trace{name}")
    reply = Message.objects.create(conversation=conversation, role=Role.COACH, content=f"hi there {text}",
                                   reply_to=message, specialist="coach", trace_id=f"trace{name}")
    turn = Turn.objects.create(learner_message=message, reply=reply, specialist="coach", rule="default",
                               reason="test", trace_id=f"trace{name}{learner.pk}")
    session = services.session_schedule(learner=learner, start=timezone.now() + timedelta(days=1),
                                        duration_minutes=30, topic=f"laps {text}".strip())
    CheckIn.objects.create(learner=learner, session=session, message=message, outcome="completed")
    content = f"prefers evening swims {text}".strip()
    fact = Fact.objects.create(learner=learner, fact_type="preference", content=content,
                               content_hash=hashlib.sha256(content.encode()).hexdigest(),
                               last_accessed_at=timezone.now(), source_message=message,
                               embedding=[0.01] * 384)
    now = timezone.now()
    Summary.objects.create(learner=learner, period_start=now - timedelta(days=7), period_end=now,
                           text=f"summary {text}", fact_count=1)
    Entity.objects.create(learner=learner, canonical_name=f"pool {text}".strip().lower(), label="place",
                          display_name="pool")
    return Tenant(client=client, token=token, raw=raw, api=api, learner=learner, conversation=conversation,
                  message=message, reply=reply, turn=turn, session=session, fact=fact)


@pytest.fixture
def tenants(db):
    """(a, b): two clients; everything of b's carries MARKER."""
    return make_tenant("alpha"), make_tenant("beta", text=MARKER)


@pytest.fixture
def staff(db):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("rel-staff", password="x-staff-pass-123", is_staff=True,
                                                is_superuser=True)
    api = APIClient()
    api.force_login(user)
    return api


def error_of(response) -> dict:
    """The error object of a response, asserting the one project shape."""
    body = response.json()
    assert set(body) == {"error"}, f"{response.status_code} body is not the error shape: {body}"
    err = body["error"]
    assert {"code", "message", "field"} <= set(err), err
    assert isinstance(err["code"], str) and err["code"], err
    assert isinstance(err["message"], str) and err["message"], err
    assert err["field"] is None or isinstance(err["field"], str), err
    # every error listed; the first repeated at the top for clients that read only that
    assert isinstance(err.get("errors"), list) and err["errors"], err
    assert err["errors"][0] == {key: err[key] for key in ("code", "message", "field")}, err
    return err
