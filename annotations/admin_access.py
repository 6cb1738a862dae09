"""Who may do what in the admin: read-only results, and staff who see only their own projects.

Two mixins, used by the admin of every app (dependencies point one way, so they live here):
- `ReadOnlyAdminMixin`: view only, for everyone including superusers. Derived data (metric values,
  scorings, comparison rows), what pipelines posted (runs' documents, predicted spans and values),
  gold and its versions, and the split audit are written by the services alone: an edit by hand would
  be served as a result that no computation produced.
- `ProjectScopedAdminMixin`: a staff user who is not a superuser sees the rows of the projects they
  are a member of, and no others, in lists, filters and change pages alike.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from annotations.models import Membership


class ReadOnlyAdminMixin:
    """No add, no change, no delete, for anyone: the page shows the row and nothing can be saved."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


def member_project_ids(request: HttpRequest) -> QuerySet:
    """The ids of the projects the request's user is a member of, as a subquery."""
    return Membership.objects.filter(user_id=request.user.pk).values("project_id")


class ProjectScopedAdminMixin:
    """Rows of the user's own projects only, unless the user is a superuser.

    `project_path` leads from the model to its project (`"project"`, `"run__project"`, or `"pk"` for
    the project itself). List filters on a project (or on anything reached through one) offer only the
    values present in the rows the user may see, so the filter does not name other projects.
    """

    project_path = "project"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        lookup = "pk__in" if self.project_path == "pk" else f"{self.project_path}__in"
        return queryset.filter(**{lookup: member_project_ids(request)})

    def get_list_filter(self, request: HttpRequest):
        filters = super().get_list_filter(request)
        if request.user.is_superuser:
            return filters
        return [
            (item, admin.RelatedOnlyFieldListFilter)
            if isinstance(item, str) and _is_relation(self, item)
            else item
            for item in filters
        ]


def _is_relation(model_admin: admin.ModelAdmin, path: str) -> bool:
    """True when `path` ends on a foreign key (whose choices would list every row of its model)."""
    model = model_admin.model
    field = None
    for part in path.split("__"):
        field = model._meta.get_field(part)
        if not field.is_relation:
            return False
        model = field.related_model
    return field is not None and field.is_relation
