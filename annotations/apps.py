from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotations"
    verbose_name = "Projects, documents and gold"

    def ready(self) -> None:
        # The tasks module registers the kinds of jobs this app runs (annotations.services.jobs).
        from annotations import tasks  # noqa: F401

        # Connects the counter of failed logins (user_login_failed) that the lockout reads.
        import evalproject.lockout  # noqa: F401
