from django.contrib import admin

from experiments.models import (
    ExperimentRun,
    IdempotencyKey,
    PredictedSpan,
    PredictedValue,
    RunDocument,
)

# The split audit (assignments, events, project split histories) and its additions to the annotations
# admin (document timelines, held-back gold left out) live with the splits.
from experiments.splits import admin as split_admin  # noqa: F401
from experiments.splits import admin_documents as split_admin_documents  # noqa: F401


@admin.register(ExperimentRun)
class ExperimentRunAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "project", "kind", "source", "status", "stage", "created_at"]
    list_filter = ["project", "kind", "source", "status", "stage"]
    list_select_related = ["project"]
    search_fields = ["name", "model", "config_hash"]
    readonly_fields = ["config_hash", "created_at", "finalized_at"]
    raw_id_fields = ["gold_version", "scoring_job"]


@admin.register(RunDocument)
class RunDocumentAdmin(admin.ModelAdmin):
    list_display = ["run", "document", "status", "input_tokens", "output_tokens", "cost_usd"]
    list_filter = ["status", "run__project"]
    list_select_related = ["run", "document"]
    search_fields = ["document__external_id"]
    raw_id_fields = ["run", "document"]


@admin.register(PredictedSpan)
class PredictedSpanAdmin(admin.ModelAdmin):
    list_display = ["run_document", "start", "end", "entity_type"]
    list_filter = ["entity_type"]
    list_select_related = ["run_document", "run_document__document"]
    raw_id_fields = ["run_document"]


@admin.register(PredictedValue)
class PredictedValueAdmin(admin.ModelAdmin):
    list_display = ["run_document", "attribute", "position"]
    list_select_related = ["run_document", "run_document__document", "attribute"]
    raw_id_fields = ["run_document", "attribute"]


@admin.register(IdempotencyKey)
class IdempotencyKeyAdmin(admin.ModelAdmin):
    list_display = ["run", "key", "response_status", "created_at"]
    list_select_related = ["run"]
    search_fields = ["key"]
