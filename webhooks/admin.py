"""Admin for webhooks (the secret is never shown) and their delivery attempts (read-only). Staff who
are not superusers see only their projects' rows (`annotations.admin_access`)."""

from __future__ import annotations

from django.contrib import admin

from annotations.admin_access import ProjectScopedAdminMixin, ReadOnlyAdminMixin
from webhooks.models import Webhook, WebhookDelivery


@admin.register(Webhook)
class WebhookAdmin(ProjectScopedAdminMixin, admin.ModelAdmin):
    list_display = ["url", "project", "is_active", "created_by", "created_at"]
    list_filter = ["is_active"]
    list_select_related = ["project", "created_by"]
    search_fields = ["url", "project__slug"]
    fields = ["project", "url", "description", "is_active", "created_by", "created_at"]
    readonly_fields = ["project", "url", "created_by", "created_at"]

    def has_add_permission(self, request, obj=None) -> bool:
        # A webhook is created through the API, which shows its secret once.
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "webhook__project"
    list_display = ["created_at", "webhook", "event", "attempt", "status_code", "succeeded", "duration_ms"]
    list_filter = ["succeeded", "event"]
    list_select_related = ["webhook__project"]
    search_fields = ["event_id", "webhook__url"]
    readonly_fields = [
        "webhook", "event", "event_id", "job", "attempt", "payload", "status_code", "error", "duration_ms",
        "succeeded", "created_at",
    ]  # fmt: skip
