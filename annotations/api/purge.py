"""Purging a project: its owner (creator) or a superuser deletes it with everything it holds (a job)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.jobs import JobOutputSerializer
from annotations.models import Project
from annotations.services.purge import project_get_for_purge, project_purge_request
from evalproject.api import ApiView


class ProjectPurgeApi(ApiView):
    class PurgeInputSerializer(serializers.Serializer):
        confirm = serializers.CharField(
            max_length=Project._meta.get_field("slug").max_length,
            help_text="The project's slug, to confirm.",
        )

    @extend_schema(
        operation_id="project_purge",
        request=PurgeInputSerializer,
        responses={202: JobOutputSerializer},
        examples=[
            OpenApiExample("Purge the project `letters`", value={"confirm": "letters"}, request_only=True),
        ],
    )
    def post(self, request: Request, slug: str) -> Response:
        """Delete the project, its documents, gold, runs, results and uploaded files, as a job. Only its
        creator or a superuser; `confirm` must be the slug. An audit record (who, when, slug, counts; no
        content) stays."""
        project = project_get_for_purge(user=request.user, slug=slug)
        data = self.PurgeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = project_purge_request(
            project=project, user=request.user, confirm=data.validated_data["confirm"]
        )
        return Response(JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)
