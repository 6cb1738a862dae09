"""A project's documents, filtered and keyset-paginated; texts only when asked for. A manager removes
documents from the gold (DELETE), which makes a new gold version."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.api.common import PAGE_PARAMETERS, paginated, paginated_response
from annotations.roles import Role
from annotations.selectors import document_list, project_get_for_user
from annotations.services.gold_remove import gold_documents_remove


class DocumentOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    name = serializers.CharField()
    content_hash = serializers.CharField()
    created_at = serializers.DateTimeField()


class DocumentWithTextOutputSerializer(DocumentOutputSerializer):
    text = serializers.CharField()


class DocumentListApi(APIView):
    class FilterSerializer(serializers.Serializer):
        external_id = serializers.CharField(required=False)
        name = serializers.CharField(required=False, help_text="Name contains (any case).")
        has_gold = serializers.BooleanField(required=False, allow_null=True, default=None)
        include_text = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        operation_id="documents_list",
        parameters=[
            OpenApiParameter("external_id", str, description="Exactly this external id."),
            OpenApiParameter("name", str, description="Name contains (any case)."),
            OpenApiParameter(
                "has_gold", bool, description="In the current gold version (spans or attributes)."
            ),
            OpenApiParameter("include_text", bool, description="Include each document's full text."),
            *PAGE_PARAMETERS,
        ],
        responses=paginated(DocumentWithTextOutputSerializer, "DocumentPage"),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        query = filters.validated_data
        documents = document_list(
            project=project,
            external_id=query.get("external_id"),
            name_contains=query.get("name"),
            has_gold=query.get("has_gold"),
            include_text=query["include_text"],
        )
        output = DocumentWithTextOutputSerializer if query["include_text"] else DocumentOutputSerializer
        return paginated_response(queryset=documents, serializer_class=output, request=request, view=self)

    class DocumentsRemoveInputSerializer(serializers.Serializer):
        document_ids = serializers.ListField(
            child=serializers.CharField(max_length=255), allow_empty=False, max_length=10_000
        )

    @extend_schema(
        operation_id="documents_remove_from_gold",
        request=DocumentsRemoveInputSerializer,
        responses=inline_serializer(
            "DocumentsRemoved",
            {
                "gold_versions": serializers.ListField(
                    child=serializers.DictField(), help_text="Each new version's counts."
                )
            },
        ),
        description="Remove documents from the gold: a new gold version of each kind that held them. "
        "The documents and older versions stay.",
    )
    def delete(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        data = self.DocumentsRemoveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        versions = gold_documents_remove(
            project=project, external_ids=data.validated_data["document_ids"], user=request.user
        )
        return Response({"gold_versions": versions})
