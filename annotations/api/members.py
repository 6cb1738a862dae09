"""A project's members: anyone in the project lists them; managers add them or change their role."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.common import paginated, paginated_response
from annotations.roles import Role
from annotations.selectors import membership_list, project_get_for_user
from annotations.services import membership_upsert
from evalproject.api import ApiView
from evalproject.validation import ChoiceField


class MemberOutputSerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    role = serializers.CharField()
    created_at = serializers.DateTimeField()


class MemberListUpsertApi(ApiView):
    paginated_methods = ("get",)

    class UpsertInputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150, help_text="An existing user's username.")
        role = ChoiceField(choices=Role.values, help_text="The member's role in this project.")

    @extend_schema(
        operation_id="members_list",
        responses=paginated(MemberOutputSerializer, "MemberPage"),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=None)
        return paginated_response(
            queryset=membership_list(project=project),
            serializer_class=MemberOutputSerializer,
            request=request,
            view=self,
        )

    @extend_schema(
        operation_id="members_upsert",
        request=UpsertInputSerializer,
        responses={201: MemberOutputSerializer, 200: MemberOutputSerializer},
        examples=[
            OpenApiExample(
                "Give a pipeline's account the pipeline role",
                value={"username": "pipeline-bot", "role": "pipeline"},
                request_only=True,
            )
        ],
    )
    def post(self, request: Request, slug: str) -> Response:
        """Add a member (201) or change an existing member's role (200). Managers only; safe to retry."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = self.UpsertInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        membership, created = membership_upsert(project=project, **serializer.validated_data)
        return Response(
            MemberOutputSerializer(membership).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
