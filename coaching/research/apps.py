from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_delete, pre_save


class ResearchConfig(AppConfig):
    """Studies, arms, calendar feeds, reminders and the adherence export. Nested under `coaching`
    (research reads coaching data: plans, sessions, check-ins) but with its own label and migrations."""

    name = "coaching.research"
    label = "research"
    verbose_name = "Research (studies and adherence)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import coaching.research.api.schema_extensions  # noqa: F401  (registers the OpenAPI descriptions)
        from coaching.research.schedule import register_periodic_tasks
        from coaching.research.services import enrollments_keep_on_learner_delete, learner_treatment_follows_enrollment

        post_migrate.connect(register_periodic_tasks, sender=self, dispatch_uid="research_periodic_tasks")
        pre_save.connect(learner_treatment_follows_enrollment, sender="identity.Learner",
                         dispatch_uid="research_treatment_follows_enrollment")
        # However a learner is deleted (the erasure API, the admin), their enrolments stay as stubs.
        pre_delete.connect(enrollments_keep_on_learner_delete, sender="identity.Learner",
                           dispatch_uid="research_enrollments_keep_on_learner_delete")
