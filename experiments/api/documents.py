"""A project's documents, filtered (also by split) and keyset-paginated; texts only when asked for. A
manager removes documents from the gold (DELETE), which makes a new gold version.

It lives with the experiments app because it filters by split; the documents themselves are the
annotations app's.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.common import paginated, paginated_response
from annotations.models import Document
from annotations.roles import Role
from annotations.selectors import document_list, project_get_for_user
from annotations.services.gold_remove import MAX_DOCUMENTS_PER_REMOVAL, gold_documents_remove
from evalproject.api import ApiView
from evalproject.validation import ChoiceField
from experiments.models import Split
from experiments.splits import split_documents_in


class DocumentOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField(help_text="The document_id of imports and predictions.")
    name = serializers.CharField()
    content_hash = serializers.CharField(help_text="sha256 of the text.")
    created_at = serializers.DateTimeField()


class DocumentWithTextOutputSerializer(DocumentOutputSerializer):
    text = serializers.CharField(required=False, help_text="The full text; only with include_text=true.")


class GoldVersionMadeOutputSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="`spans` or `attributes`: the gold the version is of.")
    gold_version = serializers.IntegerField(help_text="The new version's number.")
    documents = serializers.IntegerField(help_text="Documents in the new version.")
    documents_removed = serializers.IntegerField(
        help_text="Documents the previous version had and it has not."
    )
    rows_carried_over = serializers.IntegerField(help_text="Gold rows copied from the previous version.")


class DocumentsRemovedOutputSerializer(serializers.Serializer):
    gold_versions = GoldVersionMadeOutputSerializer(many=True, help_text="One new version per kind of gold.")


class DocumentListApi(ApiView):
    class DocumentsRemoveInputSerializer(serializers.Serializer):
        document_ids = serializers.ListField(
            child=serializers.CharField(max_length=Document._meta.get_field("external_id").max_length),
            allow_empty=False,
            max_length=MAX_DOCUMENTS_PER_REMOVAL,
            help_text="The external ids of the documents to remove from the current gold "
            f"(at most {MAX_DOCUMENTS_PER_REMOVAL}).",
        )

    class FilterSerializer(serializers.Serializer):
        external_id = serializers.CharField(
            required=False, max_length=255, help_text="Exactly this external id."
        )
        name = serializers.CharField(required=False, max_length=500, help_text="Name contains (any case).")
        has_gold = serializers.BooleanField(
            required=False,
            allow_null=True,
            default=None,
            help_text="In the current gold version (spans or attributes), or not.",
        )
        stage = ChoiceField(
            choices=Split.values,
            required=False,
            help_text="Only the documents of this split. The test documents are refused (403) while they "
            "are held back; a project with the null strategy has no splits (400).",
        )
        include_text = serializers.BooleanField(
            required=False, default=False, help_text="Include each document's full text."
        )

    query_serializers = {"get": FilterSerializer}
    paginated_methods = ("get",)
    delete_takes_body = True

    @extend_schema(
        operation_id="documents_list",
        responses=paginated(DocumentWithTextOutputSerializer, "DocumentPage"),
    )
    def get(self, request: Request, slug: str) -> Response:
        """The project's documents, oldest first. Every member from viewer up."""
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
        if "stage" in query:
            in_split = split_documents_in(
                project=project, split=query["stage"], user=request.user, request_id=request.request_id
            )
            documents = documents.filter(pk__in=in_split.values("pk"))
        output = DocumentWithTextOutputSerializer if query["include_text"] else DocumentOutputSerializer
        return paginated_response(queryset=documents, serializer_class=output, request=request, view=self)

    @extend_schema(
        operation_id="documents_remove_from_gold",
        request=DocumentsRemoveInputSerializer,
        responses={200: DocumentsRemovedOutputSerializer},
        examples=[
            OpenApiExample(
                "Remove two documents from the gold",
                value={"document_ids": ["letter-1", "letter-2"]},
                request_only=True,
            ),
        ],
    )
    def delete(self, request: Request, slug: str) -> Response:
        """Remove documents from the gold: a new gold version of each kind that held them. The documents
        and the older versions (and the scores naming them) stay. Managers only."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        data = self.DocumentsRemoveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        versions = gold_documents_remove(
            project=project, external_ids=data.validated_data["document_ids"], user=request.user
        )
        return Response(DocumentsRemovedOutputSerializer({"gold_versions": versions}).data)
