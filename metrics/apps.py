from django.apps import AppConfig


class MetricsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metrics"
    verbose_name = "Scores and comparison rows"

    def ready(self) -> None:
        # annotations may not import metrics: what a gold import sets off here is handed to it.
        from annotations.services.gold_import import register_gold_imported_hook

        # The tasks module registers the kinds of jobs this app runs (annotations.services.jobs).
        from metrics import tasks  # noqa: F401
        from metrics.services.gold_imports import human_runs_record, runs_rescore_on_new_gold

        register_gold_imported_hook(human_runs_record)
        register_gold_imported_hook(runs_rescore_on_new_gold)

        from annotations.signals import job_finished
        from metrics.receivers import on_job_finished

        job_finished.connect(on_job_finished, dispatch_uid="metrics.on_job_finished")
