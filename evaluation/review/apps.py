from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ReviewConfig(AppConfig):
    """The admin as review console: conversation audit, defect tags, roles, text redaction."""

    name = "evaluation.review"
    label = "review"
    verbose_name = "Review console"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from evaluation.review.roles import setup_roles_after_migrate

        # Hung off this app: post_migrate fires once per app config, and the review app is the last
        # one whose permissions exist (it needs every other app's permissions to build the groups).
        post_migrate.connect(setup_roles_after_migrate, sender=self, dispatch_uid="review.setup_roles")
