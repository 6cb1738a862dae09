"""POST /runs/{id}/finalize/ and /runs/{id}/rescore/: queue a scoring job, answer 202 with it."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.models import Job
from annotations.roles import Role
from evalproject.api import ApiView
from experiments.selectors import run_get_for_user
from metrics.services import scoring_request


class ScoringJobOutput(serializers.ModelSerializer):
    class Meta:
        model = Job
        fields = ["id", "kind", "state", "progress_done", "progress_total", "params", "created_at"]


class ScoringRequestOutput(serializers.Serializer):
    run = serializers.IntegerField()
    job = ScoringJobOutput(help_text="The scoring job; follow it at job_url until it succeeds or fails.")
    job_url = serializers.CharField()


class FinalizeInput(serializers.Serializer):
    allow_empty = serializers.BooleanField(
        default=False,
        help_text="Score a run without any predictions (every gold item counts as missed); "
        "without it such a run answers 409.",
    )


class RunFinalizeApi(ApiView):
    @extend_schema(
        operation_id="runs_finalize",
        request=FinalizeInput,
        responses={202: ScoringRequestOutput},
        examples=[
            OpenApiExample("Finalize", value={}, request_only=True),
            OpenApiExample(
                "Finalize a run with no predictions", value={"allow_empty": True}, request_only=True
            ),
        ],
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Close an open run to new predictions and score it on a worker. Pipelines and managers."""
        run = run_get_for_user(user=request.user, run_id=run_id, required=Role.PIPELINE)
        body = FinalizeInput(data=request.data)
        body.is_valid(raise_exception=True)
        job = scoring_request(
            run=run, user=request.user, rescore=False, allow_empty=body.validated_data["allow_empty"]
        )
        return _accepted(run.pk, job)


class RunRescoreApi(ApiView):
    @extend_schema(
        operation_id="runs_rescore",
        request=None,
        responses={202: ScoringRequestOutput},
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Score a scored or failed run again (after a gold or settings change); earlier scorings stay
        readable. Takes no body. Pipelines and managers."""
        run = run_get_for_user(user=request.user, run_id=run_id, required=Role.PIPELINE)
        job = scoring_request(run=run, user=request.user, rescore=True)
        return _accepted(run.pk, job)


def _accepted(run_id: int, job: Job) -> Response:
    job.refresh_from_db()  # in-process tasks (the embedded default) have already run it
    body = {"run": run_id, "job": ScoringJobOutput(job).data, "job_url": f"/api/v1/jobs/{job.pk}/"}
    return Response(body, status=status.HTTP_202_ACCEPTED)
