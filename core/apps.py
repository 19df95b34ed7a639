from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Bloom core"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        import core.schema  # noqa: F401  (registers the OpenAPI auth extension)
        from core.pool_check import install_on_pool

        connection_created.connect(install_on_pool, dispatch_uid="core.pool_check")
