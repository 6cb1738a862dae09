"""Admin for runs and what pipelines posted: view only, except a run's name and description.

A run's status, stage, split, gold version and `is_final` are moved by the services (finalize,
scoring, split transitions); an edit by hand would serve results no computation produced. Staff who
are not superusers see only their projects' rows (`annotations.admin_access`).
"""

from django.contrib import admin
from django.http import HttpRequest

from annotations.admin_access import ProjectScopedAdminMixin, ReadOnlyAdminMixin
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

RUN_EDITABLE_FIELDS = ("name", "description")


@admin.register(ExperimentRun)
class ExperimentRunAdmin(ProjectScopedAdminMixin, admin.ModelAdmin):
    list_display = ["id", "name", "project", "kind", "source", "status", "stage", "created_at"]
    list_filter = ["project", "kind", "source", "status", "stage"]
    list_select_related = ["project"]
    search_fields = ["name", "model", "config_hash"]

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> list[str]:
        return [
            field.name
            for field in self.model._meta.concrete_fields
            if field.name not in RUN_EDITABLE_FIELDS and not field.primary_key
        ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs are created by pipelines through the API, with their config and prompts

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # DELETE /api/v1/runs/{id}/ checks the split rules; the admin would not


@admin.register(RunDocument)
class RunDocumentAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "run__project"
    list_display = ["run", "document", "status", "input_tokens", "output_tokens", "cost_usd"]
    list_filter = ["status", "run__project"]
    list_select_related = ["run", "document"]
    search_fields = ["document__external_id"]
    raw_id_fields = ["run", "document"]


@admin.register(PredictedSpan)
class PredictedSpanAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "run_document__run__project"
    list_display = ["run_document", "start", "end", "entity_type"]
    list_filter = ["entity_type"]
    list_select_related = ["run_document", "run_document__document"]
    raw_id_fields = ["run_document"]


@admin.register(PredictedValue)
class PredictedValueAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "run_document__run__project"
    list_display = ["run_document", "attribute", "position"]
    list_select_related = ["run_document", "run_document__document", "attribute"]
    raw_id_fields = ["run_document", "attribute"]


@admin.register(IdempotencyKey)
class IdempotencyKeyAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "run__project"
    list_display = ["run", "key", "response_status", "created_at"]
    list_select_related = ["run"]
    search_fields = ["key"]
