"""Erasure of a learner ("forget me"): everything about the learner goes, in one call.

`memory.services.forget.learner_forget` removes what memory holds (facts with their embeddings and
history, summaries, entities, mentions, relations, extraction runs) and anonymises telemetry (the
rows stay for cost/latency aggregates, with learner and conversation ids NULL and prompt/response
content cleared). Deleting the Learner then cascades through everything coaching and research
hold: profile, conversations, messages, turns, plans, sessions, check-ins, calendar feeds,
reminders. Study enrolments are the exception (intention to treat: every randomised participant
stays in the study's record): each is kept as a pseudonymous stub with no link to the learner
(study, arm, stratum and slot, enrolment and withdrawal dates, the baseline answers copied at
enrolment, and the learner's random research UUID, from which the study's HMAC participant id is
derived; no name, goal text or message). One still running is withdrawn at the erasure. The
export then shows the participant's rows up to that week with nothing observed after it.
Telemetry rows of the learner's turns carry no learner id but the conversation id: they are
anonymised by conversation too, before the conversations disappear.

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
        # Study enrolments are kept as stubs by research's pre_delete receiver (also on an admin delete).
        counts["enrolments_kept"] = learner.enrollments.count()
        deleted, _ = Learner.objects.filter(pk=learner.pk).delete()
        counts["rows_deleted"] = deleted
    return counts
