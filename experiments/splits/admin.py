"""The split audit in the admin: read-only for everyone, transitions only through actions that call services.

Auditors are staff users with the auditor role in a project (managers see the same): they see the
assignments, events and split history of their projects and nothing else, since they hold no model
permission on gold or metrics. No split field can be edited by hand, by anyone; sealed assignments
could not be edited anyway. The document timeline and the gold admin's rules are in admin_documents.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from annotations.admin_access import ProjectScopedAdminMixin, ReadOnlyAdminMixin
from annotations.models import Membership
from annotations.roles import Role
from experiments.models import ExperimentRun, SplitAssignment, SplitEvent, SplitHistory
from experiments.splits.audit import SPLIT_KEYS, split_counts
from experiments.splits.errors import SplitRuleViolation
from experiments.splits.transitions import (
    split_accept,
    split_assign_development,
    split_move_to_validation,
    split_reject,
)

AUDIT_ROLES = (Role.AUDITOR, Role.MANAGER)


def _project_ids_with_role(request: HttpRequest, roles) -> set[int]:
    return set(
        Membership.objects.filter(user=request.user, role__in=roles).values_list("project_id", flat=True)
    )


class AuditReadOnlyAdmin(ReadOnlyAdminMixin, ProjectScopedAdminMixin, admin.ModelAdmin):
    """Visible to superusers and to the auditors and managers of a project; editable by no one."""

    project_field = "project"

    @property
    def project_path(self) -> str:
        return self.project_field

    def _audited_project_ids(self, request: HttpRequest) -> set[int] | None:
        """None for a superuser (every project), else the projects the user audits or manages."""
        if request.user.is_superuser:
            return None
        return _project_ids_with_role(request, AUDIT_ROLES)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        project_ids = self._audited_project_ids(request)
        if project_ids is None:
            return queryset
        return queryset.filter(**{f"{self.project_field}__in": project_ids})

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff and self.has_view_permission(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        project_ids = self._audited_project_ids(request)
        if project_ids is None:
            return True
        if obj is None:
            return bool(project_ids)
        return getattr(obj, f"{self.project_field}_id", getattr(obj, "pk", None)) in project_ids


def _timeline(events) -> str:
    """An HTML table of split events: when, what, from → to, phase, who, why, seed, request id."""
    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{} → {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                event.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                event.action,
                event.from_split or "unassigned",
                event.to_split or "unassigned",
                event.phase,
                event.actor or "-",
                event.reason or "-",
                "-" if event.seed is None else event.seed,
                event.request_id or "-",
            )
            for event in events
        ),
    )
    return format_html(
        '<table class="split-timeline"><thead><tr><th>When</th><th>Action</th><th>Split</th><th>Phase</th>'
        "<th>Who</th><th>Reason</th><th>Seed</th><th>Request id</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


@admin.register(SplitAssignment)
class SplitAssignmentAdmin(AuditReadOnlyAdmin):
    list_display = ["document", "project", "split", "project_phase", "sealed", "updated_at"]
    list_filter = ["project", "split", "project__phase", "sealed"]
    list_select_related = ["document", "project"]
    search_fields = ["document__external_id"]
    fields = ["project", "document", "split", "sealed", "assigned_at", "updated_at", "timeline"]
    readonly_fields = fields

    @admin.display(description="phase", ordering="project__phase")
    def project_phase(self, assignment: SplitAssignment) -> str:
        return assignment.project.phase

    @admin.display(description="event timeline")
    def timeline(self, assignment: SplitAssignment) -> str:
        events = SplitEvent.objects.filter(document_id=assignment.document_id).select_related("actor")
        return _timeline(events.order_by("id"))


@admin.register(SplitEvent)
class SplitEventAdmin(AuditReadOnlyAdmin):
    list_display = ["created_at", "project", "document", "action", "from_split", "to_split", "phase", "actor"]
    list_filter = ["project", "action", "phase"]
    list_select_related = ["project", "document", "actor"]
    search_fields = ["document__external_id", "request_id"]
    fields = [
        "created_at",
        "project",
        "document",
        "action",
        "from_split",
        "to_split",
        "phase",
        "actor",
        "reason",
        "seed",
        "request_id",
        "run",
        "counts_after",
    ]
    readonly_fields = fields


class SplitActionForm(ActionForm):
    """The parameters of the transitions, next to the action menu."""

    n = forms.IntegerField(required=False, min_value=1, label="n")
    seed = forms.IntegerField(required=False, min_value=0)
    run = forms.IntegerField(required=False, label="run id", help_text="The development run to validate.")
    stratify_by = forms.CharField(required=False, label="stratify by")
    reason = forms.CharField(required=False)


@admin.register(SplitHistory)
class SplitHistoryAdmin(AuditReadOnlyAdmin):
    """One row per project: its strategy, phase and counts, and the history of its transitions."""

    project_field = "pk"
    list_display = ["slug", "strategy", "phase", "counts"]
    list_filter = ["strategy", "phase"]
    search_fields = ["slug", "name"]
    fields = ["slug", "name", "strategy", "phase", "chosen_config_hash", "counts", "history"]
    readonly_fields = fields
    action_form = SplitActionForm
    actions = ["assign_development", "move_to_validation", "accept", "reject"]

    @admin.display(description="documents per split")
    def counts(self, project: SplitHistory) -> str:
        counts = split_counts(project=project)
        return ", ".join(f"{key} {counts[key]}" for key in SPLIT_KEYS)

    @admin.display(description="split history (counts after each transition)")
    def history(self, project: SplitHistory) -> str:
        events = SplitEvent.objects.filter(project=project, document__isnull=True).select_related("actor")
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            + "<td>{}</td>" * len(SPLIT_KEYS)
            + "</tr>",
            (
                (
                    event.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                    event.action,
                    event.phase,
                    event.actor or "-",
                    event.reason or "-",
                    *(event.counts_after.get(key, 0) for key in SPLIT_KEYS),
                )
                for event in events.order_by("id")
            ),
        )
        header = "".join(f"<th>{key}</th>" for key in SPLIT_KEYS)
        return format_html(
            '<table class="split-history"><thead><tr><th>When</th><th>Action</th><th>Phase</th><th>Who</th>'
            "<th>Reason</th>" + header + "</tr></thead><tbody>{}</tbody></table>",
            rows,
        )

    def has_manage_splits_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser or bool(_project_ids_with_role(request, [Role.MANAGER]))

    def _run_transition(self, request: HttpRequest, queryset: QuerySet, transition) -> None:
        form = SplitActionForm(request.POST)
        form.is_valid()
        values = {key: value for key, value in form.cleaned_data.items() if value not in (None, "")}
        managed = None if request.user.is_superuser else _project_ids_with_role(request, [Role.MANAGER])
        for project in queryset:
            if managed is not None and project.pk not in managed:
                self.message_user(
                    request, f"{project.slug}: only its managers change splits.", messages.ERROR
                )
                continue
            try:
                documents = transition(project, values)
            except (SplitRuleViolation, ValidationError, ExperimentRun.DoesNotExist) as refusal:
                self.message_user(request, f"{project.slug}: {_reason(refusal)}", messages.ERROR)
                continue
            self.message_user(
                request, f"{project.slug}: {len(documents)} document(s) moved.", messages.SUCCESS
            )

    def _common(self, request: HttpRequest, values: dict) -> dict:
        return {"actor": request.user, "reason": values.get("reason", ""), "request_id": request.request_id}

    @admin.action(
        description="Assign development documents (n, seed, stratify by)", permissions=["manage_splits"]
    )
    def assign_development(self, request: HttpRequest, queryset: QuerySet) -> None:
        def transition(project, values):
            return split_assign_development(
                project=project,
                n=values.get("n"),
                seed=values.get("seed"),
                stratify_by=values.get("stratify_by"),
                **self._common(request, values),
            )

        self._run_transition(request, queryset, transition)

    @admin.action(
        description="Move to validation (n, seed, run id, stratify by)", permissions=["manage_splits"]
    )
    def move_to_validation(self, request: HttpRequest, queryset: QuerySet) -> None:
        def transition(project, values):
            run = ExperimentRun.objects.get(project=project, pk=values.get("run"))
            return split_move_to_validation(
                project=project,
                run=run,
                n=values.get("n"),
                seed=values.get("seed"),
                stratify_by=values.get("stratify_by"),
                **self._common(request, values),
            )

        self._run_transition(request, queryset, transition)

    @admin.action(
        description="Accept: remaining documents become the test set", permissions=["manage_splits"]
    )
    def accept(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._run_transition(
            request,
            queryset,
            lambda project, values: split_accept(project=project, **self._common(request, values)),
        )

    @admin.action(
        description="Reject: validation documents return to development", permissions=["manage_splits"]
    )
    def reject(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._run_transition(
            request,
            queryset,
            lambda project, values: split_reject(project=project, **self._common(request, values)),
        )


def _reason(refusal: Exception) -> str:
    if isinstance(refusal, SplitRuleViolation):
        return refusal.message
    if isinstance(refusal, ExperimentRun.DoesNotExist):
        return "give the id of a run of this project."
    return "; ".join(refusal.messages)
