from django.apps import AppConfig


class TelemetryConfig(AppConfig):
    name = "telemetry"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every model call is recorded from here on; callers cannot forget it.
        from core.llm import register_observer
        from telemetry.recorder import recorder

        register_observer(recorder)
