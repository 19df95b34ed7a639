from django.apps import AppConfig
from django.db.models.signals import post_migrate

# Beat schedules, registered as django_celery_beat rows so staff can edit them in the admin.
PERIODIC_TASKS = (
    ("memory: decay + tier moves", "memory.decay_tiers", 60 * 60),
    ("memory: consolidation (offline)", "memory.consolidate", 24 * 60 * 60),
    ("memory: re-send tasks a broker lost", "memory.resend_lost", 10 * 60),
)


def register_periodic_tasks(sender=None, using: str = "default", **kwargs) -> None:
    """Idempotent: creates missing schedules, never overwrites one an admin edited."""
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    for name, task, seconds in PERIODIC_TASKS:
        if PeriodicTask.objects.using(using).filter(name=name).exists():
            continue
        every, _ = IntervalSchedule.objects.using(using).get_or_create(every=seconds, period=IntervalSchedule.SECONDS)
        PeriodicTask.objects.using(using).create(name=name, task=task, interval=every, queue="memory")


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(register_periodic_tasks, sender=self, dispatch_uid="memory.periodic_tasks")
