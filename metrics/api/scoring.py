"""POST /runs/{id}/finalize/ and /runs/{id}/rescore/: queue a scoring job, answer 202 with it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.models import Job
from annotations.roles import Role
from annotations.selectors import gold_version_current
from evalproject.api import ApiView
from experiments.selectors import run_get_for_user
from metrics.services.scoring import scoring_request


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
        return job_accepted(job, ScoringJobOutput, run=run.pk)


@extend_schema_field({"oneOf": [{"type": "string", "enum": ["latest"]}, {"type": "integer", "minimum": 1}]})
class GoldVersionField(serializers.Field):
    """ "latest", or the number of the project's newest gold version (the same thing, stated)."""

    default_error_messages = {"invalid": 'must be "latest" or a gold version number.'}

    def to_internal_value(self, data):
        if data == "latest" or (isinstance(data, int) and not isinstance(data, bool)):
            return data
        self.fail("invalid")

    def to_representation(self, value):
        return value


class RescoreInput(serializers.Serializer):
    gold_version = GoldVersionField(
        default="latest",
        help_text='The gold version to score on: "latest" (the default), or its number. A run is rescored '
        "on the newest version only; its earlier scorings, on their own versions, stay readable.",
    )


class RunRescoreApi(ApiView):
    @extend_schema(
        operation_id="runs_rescore",
        request=RescoreInput,
        responses={202: ScoringRequestOutput},
        examples=[
            OpenApiExample("Rescore on the newest gold", value={"gold_version": "latest"}, request_only=True),
            OpenApiExample("Rescore, no body", value={}, request_only=True),
        ],
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Score a scored or failed run again (after a gold or settings change) on the project's newest
        gold version; earlier scorings stay readable. The body is optional. Pipelines and managers."""
        run = run_get_for_user(user=request.user, run_id=run_id, required=Role.PIPELINE)
        body = RescoreInput(data=request.data if request.data else {})
        body.is_valid(raise_exception=True)
        requested = body.validated_data["gold_version"]
        if requested != "latest":
            latest = gold_version_current(project=run.project, kind=run.kind)
            if latest is None or requested != latest.number:
                newest = f"v{latest.number}" if latest is not None else "none yet"
                raise ValidationError(
                    {
                        "gold_version": f'a run is rescored on the newest gold version ("latest"; now {newest}), '
                        f"got {requested!r}"
                    }
                )
        job = scoring_request(run=run, user=request.user, rescore=True)
        return job_accepted(job, ScoringJobOutput, run=run.pk)


def job_accepted(job: Job, output: type[serializers.Serializer], **body: Any) -> Response:
    """202 with the queued `job` as `output` shows it, and where to follow it."""
    job.refresh_from_db()  # in-process tasks (the embedded default) have already run it
    body.update(job=output(job).data, job_url=f"/api/v1/jobs/{job.pk}/")
    return Response(body, status=status.HTTP_202_ACCEPTED)
