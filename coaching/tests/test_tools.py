"""The honesty boundary for calendar claims: the coach may say "in your calendar" only when the
learner's feed exists and they confirmed subscribing (tracked state, never assumed)."""

import pytest

from coaching.research.services import calendar_feed_create, calendar_subscription_confirm
from coaching.tests.conftest import make_client, onboarded_learner
from coaching.turn import guard
from coaching.turn.tools import ToolBox

CLAIM = "Great, your Tuesday session is in your calendar now."


@pytest.mark.django_db
def test_calendar_claim_is_false_without_a_confirmed_subscription():
    learner = onboarded_learner(make_client()[0])
    assert guard.find_false_claims(CLAIM, ToolBox(learner=learner).done)

    calendar_feed_create(learner=learner)  # a feed alone is not enough: not yet subscribed
    assert guard.find_false_claims(CLAIM, ToolBox(learner=learner).done)


@pytest.mark.django_db
def test_calendar_claim_is_backed_once_subscription_is_confirmed():
    learner = onboarded_learner(make_client()[0])
    calendar_feed_create(learner=learner)
    calendar_subscription_confirm(learner=learner)
    assert "calendar" in ToolBox(learner=learner).done
    assert not guard.find_false_claims(CLAIM, ToolBox(learner=learner).done)
