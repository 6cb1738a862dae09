from django.contrib import admin

from experiments.models import (
    ExperimentRun,
    IdempotencyKey,
    PredictedSpan,
    PredictedValue,
    RunDocument,
    SplitAssignment,
    SplitEvent,
)


@admin.register(ExperimentRun)
class ExperimentRunAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "project", "kind", "source", "status", "stage", "created_at"]
    list_filter = ["project", "kind", "source", "status", "stage"]
    list_select_related = ["project"]
    search_fields = ["name", "model", "config_hash"]
    readonly_fields = ["config_hash", "created_at", "finalized_at"]


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


@admin.register(SplitAssignment)
class SplitAssignmentAdmin(admin.ModelAdmin):
    list_display = ["document", "project", "split", "sealed", "updated_at"]
    list_filter = ["project", "split", "project__phase", "sealed"]
    list_select_related = ["document", "project"]
    search_fields = ["document__external_id"]


@admin.register(SplitEvent)
class SplitEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "project", "document", "action", "from_split", "to_split", "phase", "actor"]
    list_filter = ["project", "action", "phase"]
    list_select_related = ["project", "document", "actor"]
    search_fields = ["document__external_id", "request_id"]
