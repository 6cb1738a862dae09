from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.models import GoldKind, GoldVersion
from annotations.roles import Role
from annotations.selectors import project_get_for_user
from evalproject.api import ApiView
from evalproject.pagination import KeysetPagination
from evalproject.validation import INTEGER_MAX, ChoiceField
from metrics.services.gold_diff import gold_diff_documents, gold_diff_entries, gold_diff_summary


class GoldDiffQuery(serializers.Serializer):
    kind = ChoiceField(
        choices=GoldKind.values,
        required=False,
        help_text="spans or attributes; needed only when the project has gold of both kinds.",
    )


def _changes(help_text: str) -> serializers.ListField:
    return serializers.ListField(child=serializers.DictField(), required=False, help_text=help_text)


class GoldDiffDocumentOutput(serializers.Serializer):
    document_id = serializers.CharField(help_text="The document's external id.")
    status = serializers.CharField(help_text="added (only in b), removed (only in a) or changed.")
    spans_added = _changes("Spans of b not in a: start, end, entity_type.")
    spans_removed = _changes("Spans of a not in b: start, end, entity_type.")
    spans_changed = _changes("Spans with the same bounds and another type: start, end, from, to.")
    values_added = _changes("Attribute values of b with none in a.")
    values_removed = _changes("Attribute values of a with none in b.")
    values_changed = _changes("Attribute values that differ: from, to.")


class GoldDiffOutput(serializers.Serializer):
    kind = serializers.CharField(help_text="spans or attributes.")
    a = serializers.IntegerField(help_text="The earlier gold version's number.")
    b = serializers.IntegerField(help_text="The later gold version's number.")
    summary = serializers.DictField(
        help_text="documents_added, documents_removed, documents_changed, and per_type (spans) or "
        "per_attribute (attributes): counts of added, removed and changed. Held-back documents not counted."
    )
    next = serializers.URLField(allow_null=True, help_text="The next page of documents, or null.")
    previous = serializers.URLField(allow_null=True, help_text="The previous page of documents, or null.")
    results = GoldDiffDocumentOutput(many=True, help_text="One page of the documents that differ, by id.")


GOLD_DIFF_EXAMPLE = {
    "kind": "spans",
    "a": 1,
    "b": 2,
    "summary": {
        "documents_added": 1,
        "documents_removed": 0,
        "documents_changed": 1,
        "per_type": {"PERSON": {"added": 2, "removed": 0, "changed": 1}},
    },
    "next": None,
    "previous": None,
    "results": [
        {
            "document_id": "letter-3",
            "status": "changed",
            "spans_added": [{"start": 10, "end": 15, "entity_type": "PERSON"}],
            "spans_removed": [],
            "spans_changed": [{"start": 20, "end": 26, "from": "PLACE", "to": "PERSON"}],
        }
    ],
}


class GoldVersionDiffApi(ApiView):
    Pagination = KeysetPagination
    query_serializers = {"get": GoldDiffQuery}
    paginated_methods = ("get",)

    @extend_schema(
        operation_id="gold_version_diff",
        parameters=[
            OpenApiParameter(
                "a", int, OpenApiParameter.PATH, description="The earlier gold version's number."
            ),
            OpenApiParameter("b", int, OpenApiParameter.PATH, description="The later gold version's number."),
        ],
        responses={200: GoldDiffOutput},
        examples=[OpenApiExample("A span gold diff", value=GOLD_DIFF_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, slug: str, a: int, b: int) -> Response:
        """What changed in the gold from version a to version b: documents added, removed or changed, and
        within each the spans or values added, removed or changed; paged by document. Held-back
        documents never appear. Every member from viewer up."""
        kind, versions = gold_diff_versions(
            user=request.user, slug=slug, a=a, b=b, query_params=request.query_params
        )
        documents, status = gold_diff_documents(version_a=versions[a], version_b=versions[b])
        paginator = self.Pagination()
        page = paginator.paginate_queryset(documents, request, view=self)
        entries = list(
            gold_diff_entries(version_a=versions[a], version_b=versions[b], documents=page, status=status)
        )
        response = paginator.get_paginated_response(entries)
        response.data = {
            "kind": kind,
            "a": a,
            "b": b,
            "summary": gold_diff_summary(
                version_a=versions[a], version_b=versions[b], documents=documents, status=status
            ),
            **response.data,
        }
        return response


def gold_diff_versions(
    *, user: AbstractBaseUser, slug: str, a: int, b: int, query_params: Mapping[str, Any]
) -> tuple[str, dict[int, GoldVersion]]:
    """The kind and the gold versions a and b of project `slug` that `GET .../gold/versions/{a}/diff/{b}/`
    compares: the user must be a member (else 404), `kind` is the query's or the project's only one
    (400 when it has both), and a missing version is a 404. The gold diff page reads it too."""
    project = project_get_for_user(user=user, slug=slug, required=Role.VIEWER)
    query = GoldDiffQuery(data=query_params)
    query.is_valid(raise_exception=True)
    kind = query.validated_data.get("kind")
    if kind is None:
        kinds = sorted(set(GoldVersion.objects.filter(project=project).values_list("kind", flat=True)))
        if len(kinds) > 1:
            raise ValidationError(
                {"kind": f"the project has gold of both kinds; choose one of {', '.join(kinds)}"}
            )
        kind = kinds[0] if kinds else GoldKind.SPANS
    # A number past the column's range names no version (and must not reach the database).
    numbers = [number for number in (a, b) if number <= INTEGER_MAX]
    versions = {
        version.number: version
        for version in GoldVersion.objects.filter(
            project=project, kind=kind, number__in=numbers
        ).select_related("project")
    }
    missing = [number for number in (a, b) if number not in versions]
    if missing:
        raise NotFound(f"Project {slug!r} has no {kind} gold version {missing[0]}.")
    return kind, versions
