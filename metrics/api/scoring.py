"""POST /runs/{id}/finalize/ and /runs/{id}/rescore/: queue a scoring job, answer 202 with it."""

from __future__ import annotations

from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.models import Job
from annotations.roles import Role
from annotations.selectors import gold_version_current
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
    """Rescore on the project's newest gold version (`{"gold_version": "latest"}`, the default; its
    number is accepted too). The earlier scorings, on their own gold versions, stay readable."""

    rescore = True

    def post(self, request: Request, run_id: int) -> Response:
        requested = request.data.get("gold_version", "latest") if isinstance(request.data, dict) else "latest"
        if requested != "latest":
            run = run_get_for_user(user=request.user, run_id=run_id)
            latest = gold_version_current(project=run.project, kind=run.kind)
            if latest is None or isinstance(requested, bool) or requested != latest.number:
                newest = f"v{latest.number}" if latest is not None else "none yet"
                raise ValidationError(
                    {
                        "gold_version": f'a run is rescored on the newest gold version ("latest"; now {newest}), got {requested!r}'
                    }
                )
        return super().post(request, run_id)
