"""GET /runs/compare/?a=ID&b=ID: metric deltas (b - a), the rows whose outcome changed and the paired
tests of `manage.py compare_runs` under `paired` (`resamples`, `seed`, `level` as its flags, same
defaults; `paired=false` leaves them out: `paired` is null)."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from experiments.selectors import run_get_for_user
from metrics.comparisons import CHANGED_ROWS_SHOWN, runs_compare
from metrics.engine.uncertainty import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED
from metrics.intervals import IntervalSettings
from metrics.selectors import gold_status_for_scoring, human_ceiling_for_run, scoring_get

MAX_RESAMPLES = 20_000


class RunCompareApi(APIView):
    class QuerySerializer(serializers.Serializer):
        a = serializers.IntegerField(min_value=1)
        b = serializers.IntegerField(min_value=1)
        scoring_a = serializers.IntegerField(min_value=1, required=False)
        scoring_b = serializers.IntegerField(min_value=1, required=False)
        changed_limit = serializers.IntegerField(min_value=0, max_value=100_000, default=CHANGED_ROWS_SHOWN)
        paired = serializers.BooleanField(default=True)
        # A request computes the bootstrap while the client waits: resamples are capped.
        resamples = serializers.IntegerField(min_value=1, max_value=MAX_RESAMPLES, default=DEFAULT_RESAMPLES)
        seed = serializers.IntegerField(min_value=0, default=DEFAULT_SEED)
        level = serializers.FloatField(default=DEFAULT_LEVEL)

        def validate_level(self, value: float) -> float:
            if not 0.0 < value < 1.0:
                raise serializers.ValidationError("must be between 0 and 1 (exclusive)")
            return value

    def get(self, request: Request) -> Response:
        query = self.QuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        run_a = run_get_for_user(user=request.user, run_id=data["a"])
        run_b = run_get_for_user(user=request.user, run_id=data["b"])
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
        body["gold_status"] = {
            "a": gold_status_for_scoring(scoring=scoring_a),
            "b": gold_status_for_scoring(scoring=scoring_b),
        }
        if data["paired"]:
            body["human_ceiling"] = {
                "a": human_ceiling_for_run(run=run_a, scoring=scoring_a),
                "b": human_ceiling_for_run(run=run_b, scoring=scoring_b),
            }
        return Response(body)
