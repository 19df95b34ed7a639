from django.apps import AppConfig


class OutboxConfig(AppConfig):
    name = "core.outbox"
    label = "outbox"
    verbose_name = "Task outbox"
