"""Reading a run's results: its metrics, scorings and comparison rows (JSON pages or a streamed CSV).

Every member from viewer up reads; a non-member gets 404. `?scoring=N` reads an earlier scoring.
"""

from __future__ import annotations

from django.http import StreamingHttpResponse
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evalproject.pagination import KeysetPagination
from experiments.selectors import run_get_for_user
from metrics.exports import comparison_csv_stream, comparison_header
from metrics.models import ComparisonRow, MetricValue
from metrics.selectors import (
    comparison_row_list,
    gold_status_for_scoring,
    human_ceiling_for_run,
    metric_value_list,
    scoring_get,
    scoring_list,
)


class ScoringQuery(serializers.Serializer):
    scoring = serializers.IntegerField(min_value=1, required=False)


def _scoring_for(request: Request, run, *, with_report: bool = False):
    query = ScoringQuery(data=request.query_params)
    query.is_valid(raise_exception=True)
    return scoring_get(run=run, number=query.validated_data.get("scoring"), with_report=with_report)


class RunMetricsApi(APIView):
    """The report: metrics.json for attribute runs, results.json for span runs."""

    def get(self, request: Request, run_id: int) -> Response:
        run = run_get_for_user(user=request.user, run_id=run_id)
        scoring = _scoring_for(request, run, with_report=True)
        # The report as stored, with what the reader needs beside its numbers: whether a newer gold
        # exists, and the human ceiling (`?human_ceiling=false` leaves the paired tests out).
        body = dict(scoring.report)
        body["gold_status"] = gold_status_for_scoring(scoring=scoring)
        if request.query_params.get("human_ceiling", "true").lower() not in ("false", "0", "no"):
            body["human_ceiling"] = human_ceiling_for_run(run=run, scoring=scoring)
        response = Response(body)
        response["X-Scoring"] = str(scoring.number)
        response["X-Gold-Version"] = str(scoring.gold_version.number)
        return response


class MetricValueOutput(serializers.ModelSerializer):
    class Meta:
        model = MetricValue
        fields = ["scope", "scope_key", "name", "value", "n", "ci_low", "ci_high", "ci"]


class RunMetricValuesApi(APIView):
    """The flattened metric values of a scoring (what run comparison and dashboards read)."""

    def get(self, request: Request, run_id: int) -> Response:
        run = run_get_for_user(user=request.user, run_id=run_id)
        scoring = _scoring_for(request, run)
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
    gold_status = serializers.SerializerMethodField()
    settings = serializers.JSONField()
    documents = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_gold_status(self, scoring) -> dict:
        return gold_status_for_scoring(scoring=scoring)

    def get_documents(self, scoring) -> int:
        return len(scoring.document_ids)


class RunScoringListApi(APIView):
    def get(self, request: Request, run_id: int) -> Response:
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
    columns = serializers.SerializerMethodField()

    class Meta:
        model = ComparisonRow
        fields = ["id", "position", "match_status", "is_correct", "columns"]

    def get_columns(self, row: ComparisonRow) -> dict:
        # The export's column order (the database keeps JSON objects in its own order).
        header = self.context["header"]
        return {name: row.columns.get(name) for name in header}


class RunComparisonApi(APIView):
    class FilterSerializer(serializers.Serializer):
        scoring = serializers.IntegerField(min_value=1, required=False)
        attribute = serializers.CharField(required=False)
        match_status = serializers.CharField(required=False, allow_blank=True)
        document = serializers.CharField(required=False)
        entity_type = serializers.CharField(required=False)
        attribute_presence = serializers.BooleanField(required=False, allow_null=True, default=None)
        format = serializers.ChoiceField(choices=["json", "csv"], required=False, default="json")

    class Pagination(KeysetPagination):
        ordering = "id"

    renderer_classes = [JSONRenderer, CSVRenderer]

    def get(self, request: Request, run_id: int):
        run = run_get_for_user(user=request.user, run_id=run_id)
        filters = self.FilterSerializer(data=request.query_params)
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
