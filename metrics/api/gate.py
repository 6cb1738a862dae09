"""POST /runs/{id}/gate/: the quality gate of `manage.py gate` (`metrics.engine.gate`), against the
run's latest scoring. A failing gate is still a 200: the request succeeded, the verdict is in the body.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.http import Http404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from evalproject.api import ApiView
from evalproject.validation import ChoiceField
from experiments.errors import RunRuleError
from experiments.models import ExperimentRun
from experiments.selectors import run_get_for_user
from metrics.engine.gate import (
    DIRECTIONS,
    ON_VALUES,
    Check,
    ThresholdFileError,
    evaluate_gate,
    parse_checks,
)
from metrics.pipeline.gate_documents import baseline_ids
from metrics.selectors import scoring_get
from metrics.services.errors import ScoringNotFound


class ThresholdsInvalid(RunRuleError):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_thresholds"


def run_gate_evaluate(*, user: AbstractBaseUser, run: ExperimentRun, checks: list[Check]) -> dict[str, Any]:
    """The gate's result for the run's latest scoring (ScoringNotFound, 404, when it has none)."""
    report = scoring_get(run=run, with_report=True).report
    baselines: dict[str, dict[str, Any]] = {}
    for run_id in baseline_ids(checks):
        baseline = _baseline_report(user=user, run_id=run_id)
        if baseline is not None:
            baselines[run_id] = baseline
    return evaluate_gate(checks, report, baselines).as_dict()


def _baseline_report(*, user: AbstractBaseUser, run_id: str) -> dict[str, Any] | None:
    """The baseline's latest report, or None when it is not a run the user may read or has no scoring
    (its checks then fail, naming the baseline)."""
    if not run_id.isdigit():
        return None
    try:
        baseline = run_get_for_user(user=user, run_id=int(run_id))
        return scoring_get(run=baseline, with_report=True).report
    except (Http404, ScoringNotFound):
        return None


class GateCheckInput(serializers.Serializer):
    metric = serializers.CharField(help_text="A metric of metrics.json (with `attribute`) or a dotted path.")
    attribute = serializers.CharField(required=False, help_text="The attribute id (extraction runs).")
    min = serializers.FloatField(required=False, help_text="Passes when the value is at least this.")
    max = serializers.FloatField(required=False, help_text="Passes when the value is at most this.")
    on = ChoiceField(
        choices=ON_VALUES, required=False, help_text="Which value is held: estimate (default) or a CI bound."
    )
    baseline = serializers.CharField(required=False, help_text="A run id: non-inferiority to its estimate.")
    margin = serializers.FloatField(required=False, min_value=0, help_text="With baseline; default 0.")
    direction = ChoiceField(
        choices=DIRECTIONS,
        required=False,
        help_text="With baseline: `higher` (default) is better, or `lower`.",
    )


class GateInput(serializers.Serializer):
    checks = GateCheckInput(many=True, help_text="Each check has `metric` and one of min, max or baseline.")


class GateCheckOutput(serializers.Serializer):
    index = serializers.IntegerField()
    metric = serializers.CharField()
    attribute = serializers.CharField(allow_null=True)
    on = serializers.CharField()
    comparison = serializers.CharField(help_text='">=" or "<=".')
    threshold = serializers.FloatField(allow_null=True)
    observed = serializers.FloatField(allow_null=True)
    passed = serializers.BooleanField()
    reason = serializers.CharField()
    baseline = serializers.CharField(allow_null=True)


class GateOutput(serializers.Serializer):
    passed = serializers.BooleanField(help_text="True when every check passes.")
    checks = GateCheckOutput(many=True)


class RunGateApi(ApiView):
    @extend_schema(
        operation_id="runs_gate",
        request=GateInput,
        responses={200: GateOutput},
        examples=[
            OpenApiExample(
                "Hold an extraction run's accuracy and a span run's recall",
                value={
                    "checks": [
                        {"metric": "accuracy", "attribute": "101", "min": 0.8, "on": "lower_bound"},
                        {"metric": "micro.chars.all.recall", "min": 0.95},
                        {"metric": "micro.chars.all.f1", "baseline": "41", "margin": 0.02},
                    ]
                },
                request_only=True,
            )
        ],
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Hold the run's latest scoring against thresholds: 200 with the verdict, pass or fail; 400 for
        a malformed threshold document. Every member from viewer up."""
        run = run_get_for_user(user=request.user, run_id=run_id)
        try:
            checks = parse_checks(request.data)
        except ThresholdFileError as error:
            raise ThresholdsInvalid(
                "invalid threshold document", details={"problems": error.problems}
            ) from None
        return Response(run_gate_evaluate(user=request.user, run=run, checks=checks))
