from django.db import models


class OutboxMessage(models.Model):
    """A background task that must run. Written in the same transaction as the state change that
    needs it, so a broker outage can delay the work but never lose it (transactional outbox)."""

    task_name = models.CharField(max_length=200)
    args = models.JSONField(default=list)
    kwargs = models.JSONField(default=dict)
    queue = models.CharField(max_length=50, blank=True)
    # Same key twice → one row: duplicate submissions enqueue once.
    dedup_key = models.CharField(max_length=200, unique=True, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    sent_at = models.DateTimeField(null=True, blank=True, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["sent_at", "created_at"], name="outbox_pending_idx")]

    def __str__(self) -> str:
        state = "sent" if self.sent_at else "pending"
        return f"{self.task_name}{self.args} [{state}]"
