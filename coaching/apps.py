from django.apps import AppConfig


class CoachingConfig(AppConfig):
    name = "coaching"
    default_auto_field = "django.db.models.BigAutoField"
