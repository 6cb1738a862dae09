from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from annotations.signals import job_finished
        from webhooks.receivers import on_job_finished

        job_finished.connect(on_job_finished, dispatch_uid="webhooks.on_job_finished")
