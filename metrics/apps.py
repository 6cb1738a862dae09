from django.apps import AppConfig


class MetricsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metrics"
    verbose_name = "Scores and comparison rows"

    def ready(self) -> None:
        # Registered at start: services queue them by name (a service importing its task module
        # would close an import cycle), and autodiscovery imports metrics.tasks alone, and late.
        from metrics import tasks, tasks_chunks  # noqa: F401
