from django.apps import AppConfig


class MetricsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metrics"
    verbose_name = "Scores and comparison rows"

    def ready(self) -> None:
        # The tasks module registers the kinds of jobs this app runs (annotations.services.jobs).
        from metrics import tasks  # noqa: F401
