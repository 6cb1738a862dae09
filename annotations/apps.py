from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotations"
    verbose_name = "Projects, documents and gold"

    def ready(self) -> None:
        # Registered at start: services queue it by name (a service importing its task module would
        # close an import cycle), and Celery's autodiscovery imports task modules late.
        from annotations import tasks  # noqa: F401
