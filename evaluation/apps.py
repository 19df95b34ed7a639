from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Admin autodiscovery (django.contrib.admin's ready) has run: every ModelAdmin is registered.
        from evaluation.admin import attach_to_conversation_admin

        attach_to_conversation_admin()
