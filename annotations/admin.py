"""Admin for projects, members, tokens, documents, schema, gold and jobs (session login).

Every changelist selects its related rows in the same query (list_select_related or annotations),
so a page costs the same number of queries whatever its rows; tests pin those numbers. Gold is
view-only here: a version is immutable once written (scores name it), and changes go through an
import, which makes a new version. Staff who are not superusers see only their projects' rows
(`admin_access`).
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from rest_framework.exceptions import APIException

from annotations.admin_access import ProjectScopedAdminMixin, ReadOnlyAdminMixin
from annotations.importers.errors import ImportProblem
from annotations.models import (
    ApiToken,
    Attribute,
    Document,
    EntityType,
    GoldAttributeValue,
    GoldSpan,
    GoldVersion,
    GoldVersionDocument,
    Job,
    Membership,
    Project,
    ProjectPurge,
)
from annotations.roles import Role
from annotations.selectors.jobs import jobs_redacted
from annotations.services.job_problems import problem_dict
from annotations.services.jobs import job_retry


def _is_changelist(request: HttpRequest) -> bool:
    return bool(request.resolver_match and request.resolver_match.url_name.endswith("_changelist"))


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "pk"
    list_display = ["slug", "name", "strategy", "phase", "member_count", "created_by", "created_at"]
    list_filter = ["strategy", "phase"]
    list_select_related = ["created_by"]
    search_fields = ["slug", "name"]
    readonly_fields = ["created_by", "created_at", "updated_at"]
    inlines = [MembershipInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Project]:
        return super().get_queryset(request).annotate(member_count=Count("memberships", distinct=True))

    @admin.display(description="members", ordering="member_count")
    def member_count(self, project: Project) -> int:
        return project.member_count


@admin.register(Membership)
class MembershipAdmin(ProjectScopedAdminMixin, admin.ModelAdmin):
    list_display = ["project", "user", "role", "created_at"]
    list_filter = ["role", "project"]
    list_select_related = ["project", "user"]
    search_fields = ["user__username", "project__slug"]
    autocomplete_fields = ["user", "project"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "read_only", "expires_at", "last_used_at"]
    list_filter = ["read_only"]
    list_select_related = ["user"]
    search_fields = ["user__username", "name", "prefix"]
    readonly_fields = ["user", "prefix", "key_hash", "created_at", "last_used_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ApiToken]:
        # Tokens belong to users, not projects: staff other than superusers see their own.
        tokens = super().get_queryset(request)
        return tokens if request.user.is_superuser else tokens.filter(user_id=request.user.pk)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A key is shown once, at creation: use `manage.py create_api_token`, which prints it.
        return False


@admin.register(Document)
class DocumentAdmin(ProjectScopedAdminMixin, admin.ModelAdmin):
    list_display = ["external_id", "name", "project", "created_at"]
    list_filter = ["project"]
    list_select_related = ["project"]
    search_fields = ["external_id", "name"]
    readonly_fields = ["project", "external_id", "text", "content_hash", "created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        documents = super().get_queryset(request)
        # Texts can be megabytes each; a changelist page never shows them.
        return documents.defer("text") if _is_changelist(request) else documents

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Documents come with imports, which check their text against gold offsets.
        return False


@admin.register(EntityType)
class EntityTypeAdmin(ProjectScopedAdminMixin, admin.ModelAdmin):
    list_display = ["name", "label", "project"]
    list_filter = ["project"]
    list_select_related = ["project"]
    search_fields = ["name", "label"]


@admin.register(Attribute)
class AttributeAdmin(ProjectScopedAdminMixin, admin.ModelAdmin):
    list_display = ["attribute_id", "label", "type", "scored", "project", "position"]
    list_filter = ["project", "type"]
    list_select_related = ["project"]
    search_fields = ["attribute_id", "label", "prompt"]

    @admin.display(boolean=True, description="scored")
    def scored(self, attribute: Attribute) -> bool:
        return bool(attribute.prompt.strip())


@admin.register(GoldVersion)
class GoldVersionAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    list_display = [
        "project",
        "kind",
        "number",
        "document_count",
        "source",
        "annotator",
        "created_by",
        "created_at",
    ]
    list_filter = ["kind", "project"]
    list_select_related = ["project", "created_by"]
    search_fields = ["source", "project__slug", "annotator"]

    @admin.display(description="documents")
    def document_count(self, version: GoldVersion) -> int | None:
        # From the counts stored at import time: counting rows per listed version would cost a query each.
        return version.counts.get("documents")


@admin.register(GoldVersionDocument)
class GoldVersionDocumentAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "gold_version__project"
    list_display = ["document", "gold_version", "content_hash"]
    list_filter = ["gold_version__project", "gold_version__kind"]
    list_select_related = ["document", "gold_version", "gold_version__project"]
    search_fields = ["document__external_id"]


@admin.register(GoldSpan)
class GoldSpanAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "gold_version__project"
    list_display = ["document", "start", "end", "entity_type", "label", "gold_version"]
    list_filter = ["entity_type", "gold_version__project"]
    list_select_related = ["document", "gold_version", "gold_version__project"]
    search_fields = ["document__external_id", "label"]


@admin.register(GoldAttributeValue)
class GoldAttributeValueAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    project_path = "gold_version__project"
    list_display = ["document", "attribute", "output_data", "citation_page", "gold_version"]
    list_filter = ["gold_version__project"]
    list_select_related = ["document", "attribute", "gold_version", "gold_version__project"]
    search_fields = ["document__external_id", "attribute__attribute_id", "attribute__label"]


@admin.register(Job)
class JobAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    """Jobs are made and finished by the operations they run: read-only, with a "retry" action.

    Warnings and errors are redacted as the API redacts them (annotations.selectors.jobs): no one,
    staff included, sees a held-back document named while it is held back.
    """

    list_display = [
        "id",
        "kind",
        "state",
        "project",
        "progress_done",
        "progress_total",
        "attempts",
        "created_by",
        "created_at",
    ]
    list_filter = ["kind", "state", "project"]
    list_select_related = ["project", "created_by"]
    search_fields = ["=id", "project__slug", "created_by__username"]
    fields = readonly_fields = [
        "kind",
        "project",
        "params",
        "input_file",
        "state",
        "progress_done",
        "progress_total",
        "result",
        "redacted_warnings",
        "redacted_errors",
        "attempts",
        "created_by",
        "created_at",
        "enqueued_at",
        "started_at",
        "heartbeat_at",
        "finished_at",
    ]
    actions = ["retry"]

    def get_object(self, request: HttpRequest, object_id: str, from_field=None):
        job = super().get_object(request, object_id, from_field)
        return None if job is None else jobs_redacted([job])[0]

    @admin.display(description="warnings")
    def redacted_warnings(self, job: Job) -> str:
        return _problems_text(job.warnings)

    @admin.display(description="errors")
    def redacted_errors(self, job: Job) -> str:
        return _problems_text(job.errors)

    def has_retry_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    @admin.action(description="Retry the selected failed or stale jobs", permissions=["retry"])
    def retry(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        """A superuser retries any job; other staff the jobs of projects they manage."""
        managed = set(
            Membership.objects.filter(user=request.user, role=Role.MANAGER).values_list(
                "project_id", flat=True
            )
        )
        for job in queryset:
            if not request.user.is_superuser and job.project_id not in managed:
                self.message_user(
                    request, f"Job {job.pk}: only a manager of its project may retry it.", messages.ERROR
                )
                continue
            try:
                job_retry(job=job, user=request.user)
            except APIException as refusal:  # JobNotRetryable, or a split rule refusing the scoring
                self.message_user(request, f"Job {job.pk}: {refusal.detail}", messages.ERROR)
            else:
                self.message_user(request, f"Job {job.pk} is queued again.", messages.SUCCESS)


def _problems_text(problems: list) -> str:
    """One line per problem, with its place: `letters.jsonl:3, document 'd1': message`."""
    lines = []
    for problem in problems:
        shaped = problem_dict(problem)
        shaped["documents"] = tuple(shaped.get("documents", ()))
        lines.append(str(ImportProblem(**shaped)))
    return "\n".join(lines)


@admin.register(ProjectPurge)
class ProjectPurgeAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The audit of purged projects: superusers only (the projects are gone, so no member sees it)."""

    list_display = ["slug", "requested_by_username", "requested_at", "finished_at"]
    search_fields = ["slug", "requested_by_username"]
    readonly_fields = [
        "slug",
        "project_id_purged",
        "requested_by_username",
        "requested_at",
        "finished_at",
        "counts",
    ]
    exclude = ["requested_by", "job"]

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser
