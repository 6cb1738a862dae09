from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotations"
    verbose_name = "Projects, documents and gold"

    def ready(self) -> None:
        # evalproject.lockout connects the counter of failed logins (user_login_failed) that the lockout
        # reads; the tasks module registers the kinds of jobs this app runs (annotations.services.jobs).
        import evalproject.lockout  # noqa: F401
        from annotations import tasks  # noqa: F401
