"""Erasure of a learner ("forget me"): everything about the learner goes, in one call.

`memory.services.forget.learner_forget` removes what memory holds (facts with their embeddings and
history, summaries, entities, mentions, relations, extraction runs) and anonymises telemetry (the
rows stay for cost/latency aggregates, with learner and conversation ids NULL and prompt/response
content cleared). Deleting the Learner then cascades through everything coaching and research
hold: profile, conversations, messages, turns, plans, sessions, check-ins, enrolments, calendar
feeds, reminders. Telemetry rows of the learner's turns carry no learner id but the conversation
id: they are anonymised by conversation too, before the conversations disappear.

It touches every app, so it lives at the project level, above all of them, and is exposed as
`DELETE /api/v1/learners/<research_id>` by `bloom.api`."""

from __future__ import annotations

from django.db import transaction

from core.identity.models import Conversation, Learner, Message
from memory.services.forget import learner_forget
from telemetry.models import ModelCall


def learner_erase(*, learner) -> dict[str, int]:
    counts: dict[str, int] = dict(learner_forget(learner_id=learner.pk))
    with transaction.atomic():
        conversation_ids = list(Conversation.objects.filter(learner=learner).values_list("pk", flat=True))
        counts["telemetry_anonymised"] = counts.get("telemetry_anonymised", 0) + ModelCall.objects.filter(
            conversation_id__in=conversation_ids).update(learner_id=None, conversation_id=None,
                                                         prompt_content="", response_content="")
        counts["messages"] = Message.objects.filter(conversation_id__in=conversation_ids).count()
        counts["conversations"] = len(conversation_ids)
        deleted, _ = Learner.objects.filter(pk=learner.pk).delete()
        counts["rows_deleted"] = deleted
    return counts
