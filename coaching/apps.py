from django.apps import AppConfig


class CoachingConfig(AppConfig):
    name = "coaching"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from coaching.selectors import turns_in_flight
        from core.llm.priority import register_interactive_probe

        # Background model calls (memory) step aside while a learner waits for a reply.
        register_interactive_probe(turns_in_flight)
