from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotations"
    verbose_name = "Projects, documents and gold"

    def ready(self) -> None:
        # Connects the counter of failed logins (user_login_failed) that the lockout reads.
        import evalproject.lockout  # noqa: F401
