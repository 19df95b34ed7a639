from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Bloom core"

    def ready(self) -> None:
        import core.schema  # noqa: F401  (registers the OpenAPI auth extension)
