"""Admin for scoring results: view only, for everyone (`annotations.admin_access`).

Metric values, scorings and comparison rows are derived data, recomputed from gold and predictions
by a scoring job; a value edited by hand would be served by `/metric-values/` and `/runs/compare/`
as if computed. Staff who are not superusers see only their projects' rows.
"""

from django.contrib import admin

from annotations.admin_access import ProjectScopedAdminMixin, ReadOnlyAdminMixin
from metrics.models import ComparisonRow, MetricValue, Scoring


class ResultAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "run__project"


@admin.register(Scoring)
class ScoringAdmin(ResultAdmin):
    list_display = ["run", "number", "gold_version", "is_complete", "created_at"]
    list_filter = ["is_complete", "run__project"]
    list_select_related = ["run", "gold_version"]
    search_fields = ["run__name"]
    exclude = ["report", "document_ids"]


@admin.register(MetricValue)
class MetricValueAdmin(ResultAdmin):
    list_display = ["run", "scope", "scope_key", "name", "value", "n", "ci_low", "ci_high"]
    list_filter = ["scope", "run__project"]
    list_select_related = ["run"]
    search_fields = ["name", "scope_key"]
    raw_id_fields = ["scoring", "run"]


@admin.register(ComparisonRow)
class ComparisonRowAdmin(ResultAdmin):
    list_display = ["run", "document", "attribute", "entity_type", "match_status", "attribute_presence"]
    list_filter = ["match_status", "run__project"]
    list_select_related = ["run", "document", "attribute"]
    search_fields = ["document__external_id"]
    raw_id_fields = ["scoring", "run", "document", "attribute"]
