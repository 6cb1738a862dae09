"""POST /runs/{id}/finalize/ and /runs/{id}/rescore/: queue a scoring job, answer 202 with it."""

from __future__ import annotations

from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.models import Job
from annotations.roles import Role
from experiments.selectors import run_get_for_user
from metrics.services import scoring_request


class JobOutput(serializers.ModelSerializer):
    class Meta:
        model = Job
        fields = ["id", "kind", "state", "progress_done", "progress_total", "params", "created_at"]


class _ScoringRequestApi(APIView):
    rescore = False

    def post(self, request: Request, run_id: int) -> Response:
        run = run_get_for_user(user=request.user, run_id=run_id, required=Role.PIPELINE)
        job = scoring_request(run=run, user=request.user, rescore=self.rescore)
        job.refresh_from_db()  # in-process tasks (the embedded default) have already run it
        body = {"run": run.pk, "job": JobOutput(job).data, "job_url": f"/api/v1/jobs/{job.pk}/"}
        return Response(body, status=status.HTTP_202_ACCEPTED)


class RunFinalizeApi(_ScoringRequestApi):
    rescore = False


class RunRescoreApi(_ScoringRequestApi):
    rescore = True
