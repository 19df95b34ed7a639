from django.apps import AppConfig


class OutboxConfig(AppConfig):
    name = "bloom.outbox"
    label = "outbox"
    verbose_name = "Task outbox"
