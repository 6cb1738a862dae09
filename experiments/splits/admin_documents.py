"""Split additions to the annotations app's admin: a document's split timeline inline, and no gold of the
documents held back for the test.

Both are made by re-registering the annotations app's own admin classes with an addition, so
`annotations` keeps not knowing about splits (dependencies point one way) and its admin changes still
apply.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

# The annotations admin must be registered first: its classes are extended below.
import annotations.admin  # noqa: F401
from annotations.models import Document, GoldAttributeValue, GoldSpan
from experiments.models import SplitEvent
from experiments.splits.access import split_hidden_documents_everywhere, split_log_refused_access


class SplitEventInline(admin.TabularInline):
    """A document's split timeline, oldest first."""

    model = SplitEvent
    fk_name = "document"
    extra = 0
    can_delete = False
    ordering = ["id"]
    fields = [
        "created_at",
        "action",
        "from_split",
        "to_split",
        "phase",
        "actor",
        "reason",
        "seed",
        "request_id",
    ]
    readonly_fields = fields
    verbose_name = "split event"
    verbose_name_plural = "split timeline"

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


def _with_split_timeline(base: type[admin.ModelAdmin]) -> type[admin.ModelAdmin]:
    return type(
        base.__name__, (base,), {"inlines": [*base.inlines, SplitEventInline], "__module__": __name__}
    )


class _HidesHeldBackGold:
    """Gold of documents held back for the test is left out, and opening one is refused and logged."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).exclude(document__in=split_hidden_documents_everywhere())

    def get_object(self, request: HttpRequest, object_id: str, from_field=None):
        found = super().get_object(request, object_id, from_field)
        if found is not None:
            return found
        hidden = (
            self.model.objects.select_related("document__project")
            .filter(pk=object_id, document__in=split_hidden_documents_everywhere())
            .first()
            if str(object_id).isdigit()
            else None
        )
        if hidden is not None:
            split_log_refused_access(
                project=hidden.document.project,
                user=request.user,
                what=f"gold ({self.model._meta.verbose_name})",
                request_id=getattr(request, "request_id", ""),
                document_ids=[hidden.document_id],
            )
        return None


def _hiding_held_back_gold(base: type[admin.ModelAdmin]) -> type[admin.ModelAdmin]:
    return type(base.__name__, (_HidesHeldBackGold, base), {"__module__": __name__})


def _extend_registered(model, extend) -> None:
    """Re-register `model` with its registered admin class extended: no edit of the annotations app."""
    base = type(admin.site.get_model_admin(model))
    admin.site.unregister(model)
    admin.site.register(model, extend(base))


_extend_registered(Document, _with_split_timeline)
_extend_registered(GoldSpan, _hiding_held_back_gold)
_extend_registered(GoldAttributeValue, _hiding_held_back_gold)
