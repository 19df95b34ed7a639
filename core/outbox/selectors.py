from __future__ import annotations

from core.outbox.models import OutboxMessage


def outbox_pending_count() -> int:
    return OutboxMessage.objects.filter(sent_at__isnull=True).count()
