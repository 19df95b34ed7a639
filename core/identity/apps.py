from django.apps import AppConfig


class IdentityConfig(AppConfig):
    name = "core.identity"
    label = "identity"
    verbose_name = "Identity (clients, learners, conversations)"
    default_auto_field = "django.db.models.BigAutoField"
