from django.apps import AppConfig


class MetricsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metrics"
    verbose_name = "Scores and comparison rows"

    def ready(self) -> None:
        # annotations may not import metrics: what a gold import sets off here is handed to it.
        from annotations.services.gold_import import register_gold_imported_hook
        from metrics.services.gold_imports import human_runs_record, runs_rescore_on_new_gold

        register_gold_imported_hook(human_runs_record)
        register_gold_imported_hook(runs_rescore_on_new_gold)
