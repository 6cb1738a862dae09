from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotations"
    verbose_name = "Projects, documents and gold"

    def ready(self) -> None:
        # evalproject.lockout connects the counter of failed logins (user_login_failed) that the lockout
        # reads; the tasks module registers the kinds of jobs this app runs (annotations.services.jobs).
        # Every worker runs the job dispatcher thread; a web process sets up Django too but starts no
        # worker, so it never receives these signals.
        from celery.signals import worker_ready, worker_shutdown

        import evalproject.lockout  # noqa: F401
        from annotations import tasks  # noqa: F401
        from annotations.dispatcher import start_job_dispatcher, stop_job_dispatcher

        worker_ready.connect(start_job_dispatcher, dispatch_uid="annotations.start_job_dispatcher")
        worker_shutdown.connect(stop_job_dispatcher, dispatch_uid="annotations.stop_job_dispatcher")
