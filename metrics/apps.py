from django.apps import AppConfig


class MetricsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metrics"
    verbose_name = "Scores and comparison rows"

    def ready(self) -> None:
        # The chunk tasks live beside metrics.tasks, which Celery's autodiscovery imports alone.
        from metrics import tasks_chunks  # noqa: F401
