"""Jobs: one job's state, progress, result and problems; a project's jobs; a retry."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.common import paginated, paginated_response
from annotations.roles import Role
from annotations.selectors import job_get_for_user, job_list, project_get_for_user
from annotations.selectors.jobs import jobs_redacted
from annotations.services.jobs import job_retry
from evalproject.api import ApiView


class ProblemSerializer(serializers.Serializer):
    message = serializers.CharField()
    file = serializers.CharField(allow_null=True)
    line = serializers.IntegerField(allow_null=True)
    document_id = serializers.CharField(allow_null=True)
    field = serializers.CharField(allow_null=True)
    documents = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Every document a warning concerns."
    )


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(source="progress_done")
    total = serializers.IntegerField(source="progress_total", help_text="0 while not yet known.")
    chunks_done = serializers.IntegerField(help_text="A scoring's chunks of documents scored so far.")
    chunks_total = serializers.IntegerField(
        help_text="A scoring's chunks of documents (the unit a worker takes); 0 for other jobs."
    )


class JobOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    project = serializers.CharField(source="project.slug", read_only=True, allow_null=True)
    status = serializers.CharField(source="state", help_text="queued, running, succeeded or failed.")
    progress = ProgressSerializer(source="*")
    result = serializers.JSONField(help_text="Counts; `unchanged: true` when an import changed nothing.")
    warnings = ProblemSerializer(many=True)
    errors = ProblemSerializer(many=True)
    attempts = serializers.IntegerField(help_text="How many times a worker took the job.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class JobDetailApi(ApiView):
    @extend_schema(operation_id="jobs_retrieve", responses=JobOutputSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        job = job_get_for_user(user=request.user, job_id=job_id)
        return Response(JobOutputSerializer(job).data)


class ProjectJobListApi(ApiView):
    paginated_methods = ("get",)

    @extend_schema(
        operation_id="project_jobs_list",
        responses=paginated(JobOutputSerializer, "JobPage"),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
        return paginated_response(
            queryset=job_list(project=project),
            serializer_class=JobOutputSerializer,
            request=request,
            view=self,
            ordering="-id",
            page_transform=jobs_redacted,
        )


class JobRetryApi(ApiView):
    @extend_schema(
        operation_id="jobs_retry",
        request=None,
        responses={202: JobOutputSerializer},
        description="Queue a failed job, or one whose worker stopped (stale), again. Takes no body. Needs "
        "the manager role; 409 when the job is neither failed nor stale, or its inputs are gone.",
    )
    def post(self, request: Request, job_id: int) -> Response:
        job = job_get_for_user(user=request.user, job_id=job_id, required=Role.MANAGER)
        job = job_retry(job=job, user=request.user)
        return Response(JobOutputSerializer(jobs_redacted([job])[0]).data, status=status.HTTP_202_ACCEPTED)
