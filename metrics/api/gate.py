"""POST /runs/{id}/gate/: the quality gate of `manage.py gate`, against the run's latest scoring.

The body is the threshold file (`{"checks": [...]}`, see `metrics.engine.gate`); the answer is 200 with
the gate's result, `{"passed", "checks": [...]}`, whether the gate passes or fails: the request
succeeded, the verdict is in the body. Every member from viewer up may run it (it reads what
GET /runs/{id}/metrics/ shows); a non-member gets 404. A malformed threshold document is 400 with every
problem. A baseline check reads the baseline run's latest scoring; a baseline the user cannot read, or
one not scored yet, fails its check with the reason.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.http import Http404
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from experiments.errors import RunRuleError
from experiments.models import ExperimentRun
from experiments.selectors import run_get_for_user
from metrics.engine.gate import Check, ThresholdFileError, evaluate_gate, parse_checks
from metrics.errors import ScoringNotFound
from metrics.gate_documents import baseline_ids
from metrics.selectors import scoring_get


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


class RunGateApi(APIView):
    def post(self, request: Request, run_id: int) -> Response:
        run = run_get_for_user(user=request.user, run_id=run_id)
        try:
            checks = parse_checks(request.data)
        except ThresholdFileError as error:
            raise ThresholdsInvalid(
                "invalid threshold document", details={"problems": error.problems}
            ) from None
        return Response(run_gate_evaluate(user=request.user, run=run, checks=checks))
