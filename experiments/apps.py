from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "experiments"
    verbose_name = "Runs, predictions and splits"

    def ready(self) -> None:
        # annotations may not import experiments: the splits rule is handed to the project services here.
        from annotations.selectors.jobs import register_hidden_documents
        from annotations.services.projects import register_strategy_change_check
        from experiments.splits import split_strategy_change_check
        from experiments.splits.access import split_hidden_external_ids

        register_strategy_change_check(split_strategy_change_check)
        register_hidden_documents(split_hidden_external_ids)
