"""POST /projects/{slug}/agreement/ starts an agreement job (202); GET answers with the latest result.

Members from viewer up read; annotators and up start a job. A non-member gets 404.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.api.jobs import JobOutputSerializer
from annotations.roles import Role
from annotations.selectors import project_get_for_user
from metrics.services.agreement import agreement_job_create, agreement_latest


class ProjectAgreementApi(APIView):
    @extend_schema(operation_id="project_agreement_retrieve", responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        """The latest agreement between the project's annotators (held-back documents left out)."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
        job = agreement_latest(project=project)
        if job is None:
            raise NotFound(
                f"Project {slug!r} has no agreement result yet: POST to this address to compute it."
            )
        return Response({"job": job.pk, "computed_at": job.finished_at, **job.result})

    @extend_schema(
        operation_id="project_agreement_create", request=None, responses={202: OpenApiTypes.OBJECT}
    )
    def post(self, request: Request, slug: str) -> Response:
        """Compute the agreement between the project's annotators: a job, read at `job_url`."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.ANNOTATOR)
        job = agreement_job_create(project=project, user=request.user)
        job.refresh_from_db()  # in-process tasks (the embedded default) have already run it
        body = {"job": JobOutputSerializer(job).data, "job_url": f"/api/v1/jobs/{job.pk}/"}
        return Response(body, status=status.HTTP_202_ACCEPTED)
