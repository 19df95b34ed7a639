"""The probe background model calls ask before and while they run (core.llm.priority): a learner
is waiting exactly while one of their messages is pending, and a stale pending message (a crashed
request) stops counting after the window."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from coaching import selectors, services
from coaching.models import Message, MessageStatus
from coaching.tests.conftest import make_client, onboarded_learner
from core.llm import priority

pytestmark = pytest.mark.django_db


def test_the_application_registers_the_probe():
    assert priority._probe is selectors.turns_in_flight


def test_pending_message_means_a_learner_waits():
    client, _ = make_client()
    conversation = services.conversation_start(learner=onboarded_learner(client))
    assert selectors.turns_in_flight() is False

    message, created = services.message_receive(conversation=conversation, content="I practised today")
    assert created and message.status == MessageStatus.PENDING
    assert selectors.turns_in_flight() is True

    Message.objects.filter(pk=message.pk).update(status=MessageStatus.ANSWERED)
    assert selectors.turns_in_flight() is False


def test_a_stale_pending_message_does_not_hold_background_work_forever():
    client, _ = make_client()
    conversation = services.conversation_start(learner=onboarded_learner(client))
    message, _ = services.message_receive(conversation=conversation, content="lost request")
    old = timezone.now() - timedelta(seconds=selectors.TURN_IN_FLIGHT_WINDOW_S + 5)
    Message.objects.filter(pk=message.pk).update(created_at=old)
    assert selectors.turns_in_flight() is False
