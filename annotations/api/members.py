"""A project's members: anyone in the project lists them; managers add them or change their role."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.api.common import PAGE_PARAMETERS, paginated, paginated_response
from annotations.roles import Role
from annotations.selectors import membership_list, project_get_for_user
from annotations.services import membership_upsert


class MemberOutputSerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    role = serializers.CharField()
    created_at = serializers.DateTimeField()


class MemberListUpsertApi(APIView):
    class UpsertInputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        role = serializers.ChoiceField(choices=Role.values)

    @extend_schema(
        operation_id="members_list",
        parameters=PAGE_PARAMETERS,
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
