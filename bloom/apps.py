from django.apps import AppConfig, apps
from django.db.models.signals import post_migrate


class BloomConfig(AppConfig):
    name = "bloom"
    verbose_name = "Bloom"

    def ready(self) -> None:
        from bloom.retention import register_periodic_task

        # post_migrate is only sent for apps with models; `bloom` has none, so the hook hangs off
        # django_celery_beat, whose tables it writes to.
        post_migrate.connect(register_periodic_task, sender=apps.get_app_config("django_celery_beat"),
                             dispatch_uid="bloom.retention.periodic_task")
