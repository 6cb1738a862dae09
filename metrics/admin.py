from django.contrib import admin

from metrics.models import ComparisonRow, MetricValue, Scoring


@admin.register(Scoring)
class ScoringAdmin(admin.ModelAdmin):
    list_display = ["run", "number", "gold_version", "is_complete", "created_at"]
    list_filter = ["is_complete", "run__project"]
    list_select_related = ["run", "gold_version"]
    search_fields = ["run__name"]
    exclude = ["report", "document_ids"]


@admin.register(MetricValue)
class MetricValueAdmin(admin.ModelAdmin):
    list_display = ["run", "scope", "scope_key", "name", "value", "n", "ci_low", "ci_high"]
    list_filter = ["scope", "run__project"]
    list_select_related = ["run"]
    search_fields = ["name", "scope_key"]
    raw_id_fields = ["scoring", "run"]


@admin.register(ComparisonRow)
class ComparisonRowAdmin(admin.ModelAdmin):
    list_display = ["run", "document", "attribute", "entity_type", "match_status", "attribute_presence"]
    list_filter = ["match_status", "run__project"]
    list_select_related = ["run", "document", "attribute"]
    search_fields = ["document__external_id"]
    raw_id_fields = ["scoring", "run", "document", "attribute"]
