"""Reading a run's results: its metrics, scorings and comparison rows (JSON pages or a streamed CSV)."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.common import paginated
from evalproject.api import ApiView
from evalproject.pagination import KeysetPagination
from evalproject.renderers import JSONAnswerRenderer
from evalproject.validation import BIGINTEGER_MAX, ChoiceField
from experiments.models import RunKind
from experiments.selectors import run_get_for_user
from metrics.artefacts.exports import comparison_csv_stream, comparison_header
from metrics.engine.attributes.types import MatchStatus
from metrics.models import ComparisonRow, MetricValue
from metrics.selectors import (
    comparison_row_list,
    gold_status_for_scoring,
    metric_value_list,
    scoring_get,
    scoring_list,
)
from metrics.services.human_ceiling import human_ceiling


# What every answer showing a scoring's numbers carries beside them: the gold status of the scoring
# (metrics.selectors) and the human ceiling (metrics.services.human_ceiling), docs/agreement.md.
class GoldStatusOutput(serializers.Serializer):
    scored_on = serializers.IntegerField(help_text="The gold version the scoring used.")
    latest = serializers.IntegerField(help_text="The project's newest gold version of the same kind.")
    is_latest = serializers.BooleanField(help_text="Whether the scoring used the newest gold.")
    rows_difference = serializers.IntegerField(
        required=False,
        help_text="Spans or values the newest version has more (negative: fewer), without held-back "
        "documents; absent when the scoring used the newest gold.",
    )
    text = serializers.CharField(help_text='e.g. "scored on gold v3; v4 has 12 more spans".')


class HumanCeilingOutput(serializers.Serializer):
    gold_version = serializers.IntegerField(help_text="The gold version the model and the humans share.")
    level = serializers.FloatField(help_text="Confidence level of the intervals.")
    method = serializers.CharField(help_text="How the paired intervals are computed.")
    human_runs = serializers.ListField(
        child=serializers.DictField(), help_text="The human runs compared: run, name, scoring."
    )
    metrics = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per headline metric: scope, scope_key, name, `model` (value, ci_low, ci_high), "
        "`annotators` (each human's value as scored, `paired`: human, model, delta, ci_low, ci_high, "
        "p_value, documents_compared; `model_below`) and `text`.",
    )


def number_field(help_text: str, *, required: bool = False) -> serializers.IntegerField:
    """A run id or scoring number of a query: from 1 to the largest the database holds."""
    return serializers.IntegerField(
        min_value=1, max_value=BIGINTEGER_MAX, required=required, help_text=help_text
    )


class ScoringQuery(serializers.Serializer):
    scoring = number_field("A scoring number; the latest if omitted.")


class MetricsQuery(ScoringQuery):
    human_ceiling = serializers.BooleanField(
        default=True,
        help_text="Add the human ceiling beside the headline numbers (false: leave it out).",
    )


def scoring_for_request(request: Request, run, *, with_report: bool = False):
    """The scoring a request's `?scoring=` names (the latest when absent); 404 when there is none."""
    query = ScoringQuery(data=request.query_params)
    query.is_valid(raise_exception=True)
    return scoring_get(run=run, number=query.validated_data.get("scoring"), with_report=with_report)


class RunMetricsApi(ApiView):
    query_serializers = {"get": MetricsQuery}

    @extend_schema(
        operation_id="runs_metrics",
        responses={
            200: {
                "type": "object",
                "additionalProperties": True,
                "description": "metrics.json (attribute runs) or results.json (span runs), as the offline "
                "commands write them, with `gold_status` (whether a newer gold exists) and `human_ceiling` "
                "(the human runs scored on the same gold beside the headline numbers; null when there "
                "are none); headers X-Scoring and X-Gold-Version name what was read.",
            }
        },
    )
    def get(self, request: Request, run_id: int) -> Response:
        """The report: metrics.json for attribute runs, results.json for span runs."""
        run = run_get_for_user(user=request.user, run_id=run_id)
        query = MetricsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        scoring = scoring_for_request(request, run, with_report=True)
        body = dict(scoring.report)
        body["gold_status"] = gold_status_for_scoring(scoring=scoring)
        if query.validated_data["human_ceiling"]:
            body["human_ceiling"] = human_ceiling(run, scoring)
        response = Response(body)
        response["X-Scoring"] = str(scoring.number)
        response["X-Gold-Version"] = str(scoring.gold_version.number)
        return response


class MetricValueOutput(serializers.ModelSerializer):
    class Meta:
        model = MetricValue
        fields = ["scope", "scope_key", "name", "value", "n", "ci_low", "ci_high", "ci"]


class RunMetricValuesOutput(serializers.Serializer):
    run = serializers.IntegerField()
    scoring = serializers.IntegerField()
    gold_status = GoldStatusOutput(help_text="Whether the scoring used the newest gold.")
    values = MetricValueOutput(many=True)


class RunMetricValuesApi(ApiView):
    query_serializers = {"get": ScoringQuery}

    @extend_schema(operation_id="runs_metric_values", responses=RunMetricValuesOutput)
    def get(self, request: Request, run_id: int) -> Response:
        """The flattened metric values of a scoring (what run comparison and dashboards read)."""
        run = run_get_for_user(user=request.user, run_id=run_id)
        scoring = scoring_for_request(request, run)
        values = metric_value_list(scoring=scoring)
        return Response(
            {
                "run": run.pk,
                "scoring": scoring.number,
                "gold_status": gold_status_for_scoring(scoring=scoring),
                "values": MetricValueOutput(values, many=True).data,
            }
        )


class ScoringOutput(serializers.Serializer):
    number = serializers.IntegerField()
    gold_version = serializers.IntegerField(source="gold_version.number")
    gold_status = serializers.SerializerMethodField(help_text="Whether the scoring used the newest gold.")
    settings = serializers.JSONField()
    documents = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    @extend_schema_field(GoldStatusOutput)
    def get_gold_status(self, scoring) -> dict:
        return gold_status_for_scoring(scoring=scoring)

    def get_documents(self, scoring) -> int:
        return len(scoring.document_ids)


class RunScoringListOutput(serializers.Serializer):
    run = serializers.IntegerField()
    scorings = ScoringOutput(many=True, help_text="Newest first.")


class RunScoringListApi(ApiView):
    @extend_schema(operation_id="runs_scorings", responses=RunScoringListOutput)
    def get(self, request: Request, run_id: int) -> Response:
        """Every complete scoring of the run, newest first, with the gold version and settings of each."""
        run = run_get_for_user(user=request.user, run_id=run_id)
        scorings = scoring_list(run=run).defer("report")
        return Response({"run": run.pk, "scorings": ScoringOutput(scorings, many=True).data})


class CSVRenderer(BaseRenderer):
    """Lets `?format=csv` through DRF's content negotiation; the view streams the CSV itself."""

    media_type = "text/csv"
    format = "csv"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


class ComparisonRowOutput(serializers.ModelSerializer):
    columns = serializers.SerializerMethodField(
        help_text="Every column of the comparison export, in its order."
    )

    class Meta:
        model = ComparisonRow
        fields = ["id", "position", "match_status", "is_correct", "columns"]

    @extend_schema_field({"type": "object", "additionalProperties": True})
    def get_columns(self, row: ComparisonRow) -> dict:
        # The export's column order (the database keeps JSON objects in its own order).
        header = self.context["header"]
        return {name: row.columns.get(name) for name in header}


# The match statuses of each kind's comparison rows: attribute rows carry the engine's (blank for BOOL,
# LIST and DICT attributes); span rows those of metrics.services.span_scoring.span_rows.
MATCH_STATUSES = {
    RunKind.ATTRIBUTES: (*(status.value for status in MatchStatus), ""),
    RunKind.SPANS: ("exact", "overlap", "missed", "spurious"),
}


class RunComparisonApi(ApiView):
    class FilterSerializer(serializers.Serializer):
        scoring = number_field("A scoring number; the latest.")
        attribute = serializers.CharField(
            required=False, max_length=300, help_text="Attribute runs: only this attribute, by id or label."
        )
        match_status = ChoiceField(
            choices=sorted({status for statuses in MATCH_STATUSES.values() for status in statuses}),
            required=False,
            allow_blank=True,
            help_text="Only rows with this match status. Attribute runs: "
            + ", ".join(
                status or '"" (BOOL, LIST and DICT rows)' for status in MATCH_STATUSES[RunKind.ATTRIBUTES]
            )
            + "; span runs: "
            + ", ".join(MATCH_STATUSES[RunKind.SPANS])
            + ".",
        )
        document = serializers.CharField(
            required=False, max_length=255, help_text="Only this document's rows (external id)."
        )
        entity_type = serializers.CharField(
            required=False, max_length=100, help_text="Span runs: only rows of this entity type."
        )
        attribute_presence = serializers.BooleanField(
            required=False,
            allow_null=True,
            default=None,
            help_text="Attribute runs: only rows whose gold has (true) or lacks (false) a value.",
        )
        format = ChoiceField(
            choices=["json", "csv"],
            required=False,
            default="json",
            help_text="`csv` streams every matching row as the comparison export, unpaginated.",
        )

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            # The valid statuses, and the error listing them, are those of the run's kind.
            kind = self.context.get("kind")
            if kind is not None:
                self.fields["match_status"].choices = MATCH_STATUSES[kind]

    Pagination = KeysetPagination
    renderer_classes = [JSONAnswerRenderer, CSVRenderer]
    query_serializers = {"get": FilterSerializer}
    paginated_methods = ("get",)

    @extend_schema(
        operation_id="runs_comparison",
        responses={
            (200, "application/json"): paginated(ComparisonRowOutput, "ComparisonRowPage"),
            (200, "text/csv"): OpenApiTypes.STR,
        },
    )
    def get(self, request: Request, run_id: int):
        """The comparison rows of a scoring, filtered: JSON pages, or the whole CSV with `format=csv`.
        Rows of documents held back for the test are never shown."""
        run = run_get_for_user(user=request.user, run_id=run_id)
        filters = self.FilterSerializer(data=request.query_params, context={"kind": run.kind})
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        scoring = scoring_get(run=run, number=data.get("scoring"))
        rows = comparison_row_list(
            run=run,
            scoring=scoring,
            attribute=data.get("attribute"),
            match_status=data.get("match_status"),
            document=data.get("document"),
            attribute_presence=data.get("attribute_presence"),
            entity_type=data.get("entity_type"),
        )
        if data["format"] == "csv":
            stream = comparison_csv_stream(
                run.kind, rows.select_related("attribute").order_by("id").iterator(chunk_size=2000)
            )
            response = StreamingHttpResponse(stream, content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-comparison.csv"'
            return response
        paginator = self.Pagination()
        page = paginator.paginate_queryset(rows, request, view=self)
        output = ComparisonRowOutput(page, many=True, context={"header": comparison_header(run.kind)})
        return paginator.get_paginated_response(output.data)
