from django.contrib import admin

from annotations.models import (
    ApiToken,
    Attribute,
    Document,
    EntityType,
    GoldAttributeValue,
    GoldSpan,
    GoldVersion,
    Job,
    Membership,
    Project,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "strategy", "phase", "created_at"]
    list_filter = ["strategy", "phase"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["project", "user", "role"]
    list_filter = ["role", "project"]
    list_select_related = ["project", "user"]
    search_fields = ["user__username", "project__slug"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "read_only", "expires_at", "last_used_at"]
    list_filter = ["read_only"]
    list_select_related = ["user"]
    search_fields = ["user__username", "name", "prefix"]
    readonly_fields = ["prefix", "key_hash", "created_at", "last_used_at"]

    def has_add_permission(self, request) -> bool:
        # A key is shown once, at creation: use `manage.py create_api_token`, which prints it.
        return False


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "name", "project", "created_at"]
    list_filter = ["project"]
    list_select_related = ["project"]
    search_fields = ["external_id", "name"]
    readonly_fields = ["content_hash", "created_at"]


@admin.register(EntityType)
class EntityTypeAdmin(admin.ModelAdmin):
    list_display = ["name", "label", "project"]
    list_filter = ["project"]
    list_select_related = ["project"]
    search_fields = ["name", "label"]


@admin.register(Attribute)
class AttributeAdmin(admin.ModelAdmin):
    list_display = ["attribute_id", "label", "type", "project"]
    list_filter = ["project", "type"]
    list_select_related = ["project"]
    search_fields = ["attribute_id", "label"]


@admin.register(GoldVersion)
class GoldVersionAdmin(admin.ModelAdmin):
    list_display = ["project", "kind", "number", "source", "created_by", "created_at"]
    list_filter = ["project", "kind"]
    list_select_related = ["project", "created_by"]
    search_fields = ["source"]
    readonly_fields = ["content_hash", "counts", "created_at"]


@admin.register(GoldSpan)
class GoldSpanAdmin(admin.ModelAdmin):
    list_display = ["document", "start", "end", "entity_type", "label", "gold_version"]
    list_filter = ["entity_type", "gold_version__project"]
    list_select_related = ["document", "gold_version", "gold_version__project"]
    search_fields = ["document__external_id", "label"]
    raw_id_fields = ["document", "gold_version"]


@admin.register(GoldAttributeValue)
class GoldAttributeValueAdmin(admin.ModelAdmin):
    list_display = ["document", "attribute", "citation_page", "gold_version"]
    list_filter = ["gold_version__project"]
    list_select_related = ["document", "attribute", "gold_version", "gold_version__project"]
    search_fields = ["document__external_id", "attribute__attribute_id", "attribute__label"]
    raw_id_fields = ["document", "attribute", "gold_version"]


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "state", "project", "progress_done", "progress_total", "created_at"]
    list_filter = ["kind", "state", "project"]
    list_select_related = ["project"]
    search_fields = ["id"]
    readonly_fields = ["result", "warnings", "errors", "started_at", "finished_at", "attempts"]
