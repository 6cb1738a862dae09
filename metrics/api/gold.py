"""GET /projects/{slug}/gold/versions/{a}/diff/{b}/: what changed in the gold from version a to b, paged
by document, with a summary. `?kind=spans|attributes` when the project has gold of both kinds."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.api.common import PAGE_PARAMETERS
from annotations.models import GoldKind, GoldVersion
from annotations.roles import Role
from annotations.selectors import project_get_for_user
from evalproject.pagination import KeysetPagination
from metrics.gold_diff import gold_diff_documents, gold_diff_entries, gold_diff_summary


class GoldVersionDiffApi(APIView):
    class QuerySerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=GoldKind.values, required=False)

    class Pagination(KeysetPagination):
        ordering = "id"

    @extend_schema(
        operation_id="gold_version_diff",
        parameters=[
            OpenApiParameter("kind", str, enum=GoldKind.values, description="spans or attributes"),
            *PAGE_PARAMETERS,
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, slug: str, a: int, b: int) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
        query = self.QuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        kind = query.validated_data.get("kind")
        if kind is None:
            kinds = sorted(set(GoldVersion.objects.filter(project=project).values_list("kind", flat=True)))
            if len(kinds) > 1:
                raise ValidationError(
                    {"kind": f"the project has gold of both kinds; choose one of {', '.join(kinds)}"}
                )
            kind = kinds[0] if kinds else GoldKind.SPANS
        versions = {
            version.number: version
            for version in GoldVersion.objects.filter(
                project=project, kind=kind, number__in=[a, b]
            ).select_related("project")
        }
        missing = [number for number in (a, b) if number not in versions]
        if missing:
            raise NotFound(f"Project {slug!r} has no {kind} gold version {missing[0]}.")
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
