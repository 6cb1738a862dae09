"""GET /runs/compare/: two runs compared, with the paired tests of `manage.py compare_runs` (its defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from evalproject.api import ApiView
from evalproject.validation import BIGINTEGER_MAX
from experiments.models import ExperimentRun
from experiments.selectors import run_get_for_user
from metrics.api.results import GoldStatusOutput, HumanCeilingOutput, number_field
from metrics.engine.uncertainty.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED
from metrics.pipeline.intervals import IntervalSettings
from metrics.selectors import gold_status_for_scoring, scoring_get
from metrics.services.human_ceiling import human_ceiling
from metrics.services.run_pair import CHANGED_ROWS_SHOWN, runs_compare

MAX_RESAMPLES = 20_000


class ComparedRunOutput(serializers.Serializer):
    run = serializers.IntegerField()
    name = serializers.CharField()
    scoring = serializers.IntegerField()
    config_hash = serializers.CharField()


class MetricDeltaOutput(serializers.Serializer):
    scope = serializers.CharField(help_text="overall, entity_type or attribute.")
    scope_key = serializers.CharField()
    name = serializers.CharField()
    a = serializers.FloatField(allow_null=True)
    b = serializers.FloatField(allow_null=True)
    delta = serializers.FloatField(allow_null=True, help_text="b - a; null when either is null.")
    n_a = serializers.IntegerField(allow_null=True)
    n_b = serializers.IntegerField(allow_null=True)


class RunComparisonOutput(serializers.Serializer):
    kind = serializers.CharField()
    gold_version = serializers.IntegerField()
    a = ComparedRunOutput()
    b = ComparedRunOutput()
    metrics = MetricDeltaOutput(many=True)
    changed_rows = serializers.ListField(
        child=serializers.DictField(), help_text="Rows whose match status (or span outcome) changed."
    )
    changed_rows_total = serializers.IntegerField()
    changed_rows_truncated = serializers.BooleanField()
    paired = serializers.DictField(
        allow_null=True, help_text="The paired tests of `compare_runs` (each p-value names its test)."
    )
    gold_status = serializers.DictField(
        child=GoldStatusOutput(), help_text="`a` and `b`: whether each scoring used the newest gold."
    )
    human_ceiling = serializers.DictField(
        child=HumanCeilingOutput(allow_null=True),
        required=False,
        help_text="`a` and `b`: the human ceiling beside each run's headline numbers (null without human "
        "runs scored on the same gold); absent when `paired` is false.",
    )


class RunCompareApi(ApiView):
    class CompareQuerySerializer(serializers.Serializer):
        a = number_field("The baseline run.", required=True)
        b = number_field("The run compared to it.", required=True)
        scoring_a = number_field("A's scoring number; latest.")
        scoring_b = number_field("B's scoring number; latest.")
        changed_limit = serializers.IntegerField(
            min_value=0, max_value=100_000, default=CHANGED_ROWS_SHOWN, help_text="Changed rows shown."
        )
        paired = serializers.BooleanField(
            default=True, help_text="Run the paired tests (false: `paired` null)."
        )
        # A request computes the bootstrap while the client waits: resamples are capped.
        resamples = serializers.IntegerField(
            min_value=1, max_value=MAX_RESAMPLES, default=DEFAULT_RESAMPLES, help_text="Bootstrap resamples."
        )
        seed = serializers.IntegerField(
            min_value=0, max_value=BIGINTEGER_MAX, default=DEFAULT_SEED, help_text="Bootstrap seed."
        )
        level = serializers.FloatField(default=DEFAULT_LEVEL, help_text="Confidence level, in (0, 1).")

        def validate_level(self, value: float) -> float:
            if not 0.0 < value < 1.0:
                raise serializers.ValidationError("must be between 0 and 1 (exclusive)")
            return value

    query_serializers = {"get": CompareQuerySerializer}

    @extend_schema(operation_id="runs_compare", responses=RunComparisonOutput)
    def get(self, request: Request) -> Response:
        """Compare two scored runs of one project on the same gold version. Every member from viewer up."""
        _, _, body = runs_compare_for_query(user=request.user, query_params=request.query_params)
        return Response(body)


def runs_compare_for_query(
    *, user: AbstractBaseUser, query_params: Mapping[str, Any]
) -> tuple[ExperimentRun, ExperimentRun, dict]:
    """Runs a and b of `query_params` (validated by `RunCompareApi`'s serializer) and their comparison,
    as `GET /runs/compare/` answers it; the compare page reads it too."""
    query = RunCompareApi.CompareQuerySerializer(data=query_params)
    query.is_valid(raise_exception=True)
    data = query.validated_data
    run_a = run_get_for_user(user=user, run_id=data["a"])
    run_b = run_get_for_user(user=user, run_id=data["b"])
    scoring_a = scoring_get(run=run_a, number=data.get("scoring_a"))
    scoring_b = scoring_get(run=run_b, number=data.get("scoring_b"))
    body = runs_compare(
        run_a=run_a,
        scoring_a=scoring_a,
        run_b=run_b,
        scoring_b=scoring_b,
        changed_limit=data["changed_limit"],
        paired=IntervalSettings(level=data["level"], resamples=data["resamples"], seed=data["seed"])
        if data["paired"]
        else None,
    )
    sides = {"a": (run_a, scoring_a), "b": (run_b, scoring_b)}
    body["gold_status"] = {
        name: gold_status_for_scoring(scoring=scoring) for name, (_, scoring) in sides.items()
    }
    if data["paired"]:
        body["human_ceiling"] = {name: human_ceiling(run, scoring) for name, (run, scoring) in sides.items()}
    return run_a, run_b, body
