"""Conversations and messages: the learner message persisted first (idempotent by key), messages
left without a reply, and coach messages written outside a turn (reminders)."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from coaching.models import Conversation, Learner, Message, MessageStatus, Role
from coaching.onboarding import QUESTIONS
from coaching.selectors import profile_get


@transaction.atomic
def conversation_start(*, learner: Learner) -> Conversation:
    """A new conversation. A learner still in onboarding gets the gate's current question as the
    opening coach message (templated: the gate never waits on the model)."""
    conversation = Conversation.objects.create(learner=learner)
    profile = profile_get(learner=learner)
    if not profile.onboarded:
        opening = "Hi, I'm Bloom, your learning coach. " + QUESTIONS[profile.onboarding_step]
        Message.objects.create(conversation=conversation, role=Role.COACH, content=opening, specialist="onboarding")
    return conversation


def message_receive(*, conversation: Conversation, content: str, idempotency_key: str | None = None,
                    ) -> tuple[Message, bool]:
    """Persist the learner message first (own transaction), so nothing the learner wrote is lost
    whatever happens to the model afterwards. Returns (message, created). A repeated idempotency
    key returns the existing message with created=False."""
    if idempotency_key:
        existing = conversation.messages.filter(idempotency_key=idempotency_key).first()
        if existing is not None:
            return existing, False
    try:
        with transaction.atomic():
            message = Message.objects.create(conversation=conversation, role=Role.LEARNER, content=content,
                                             idempotency_key=idempotency_key or None, status=MessageStatus.PENDING)
    except IntegrityError:
        # A concurrent request with the same key won the race.
        return conversation.messages.get(idempotency_key=idempotency_key), False
    return message, True


# The transitions of a learner message's status, and the only code that makes them: received
# (pending) → answered, or → unanswered when no reply could be made; unanswered → pending again
# when the client retries it.
_TRANSITIONS = {MessageStatus.UNANSWERED: (MessageStatus.PENDING,),
                MessageStatus.ANSWERED: (MessageStatus.PENDING, MessageStatus.UNANSWERED),
                MessageStatus.PENDING: (MessageStatus.UNANSWERED,)}


def message_status_set(*, message: Message, status: str, **fields) -> bool:
    """Move `message` to `status` if it is in a state that may move there (a compare-and-set in
    one UPDATE, so two runners cannot both move it); `fields` are stored with it (the answering
    specialist and trace id). Returns whether it moved."""
    moved = Message.objects.filter(pk=message.pk, status__in=_TRANSITIONS[status]).update(status=status, **fields)
    if moved:
        message.status = status
        for name, value in fields.items():
            setattr(message, name, value)
    return bool(moved)


def message_mark_unanswered(*, message: Message) -> None:
    message_status_set(message=message, status=MessageStatus.UNANSWERED)


@transaction.atomic
def coach_message_post(*, learner: Learner, content: str, specialist: str) -> Message:
    """A coach message written outside a turn (a check-in reminder), appended to the learner's
    latest conversation, or to a new one when they have none. No opening question is added: the
    message is the conversation's first line."""
    conversation = Conversation.objects.filter(learner=learner).order_by("-created_at").first()
    if conversation is None:
        conversation = Conversation.objects.create(learner=learner)
    return Message.objects.create(conversation=conversation, role=Role.COACH, content=content, specialist=specialist)
