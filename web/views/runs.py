"""`/runs/<id>/`: headline, leakage (span runs, first), breakdown chart, live progress, comparison rows.

The comparison rows are the API's: the same filter serializer, the same selector (held-back documents
excluded there) and the same keyset pagination, so a page of the table is a page of
`GET /api/v1/runs/{id}/comparison/` with the same query.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from rest_framework.request import Request

from annotations.api.jobs import JobOutputSerializer
from annotations.models import JobState
from annotations.selectors.jobs import jobs_redacted
from evalproject.api import query_parameter_names, query_parameters_check
from experiments.models import ExperimentRun, RunKind
from experiments.selectors import run_get_for_user
from metrics.api.results import RunComparisonApi
from metrics.engine.attributes.types import MatchStatus
from metrics.models import MetricScope, Scoring
from metrics.selectors import (
    comparison_row_list,
    gold_status_for_scoring,
    metric_value_list,
    scoring_get,
)
from metrics.services.errors import ScoringNotFound
from metrics.services.human_ceiling import human_ceiling
from web.charts import MATCH_STATUS_CATEGORIES, Bar, IntervalPoint, interval_chart, stacked_bar_chart
from web.headlines import (
    ATTRIBUTE_MEASURE,
    SPAN_HEADLINES,
    Headline,
    HeadlineChoice,
    ceiling_by_key,
    headline_from_values,
    values_by_key,
)
from web.pages import chart_download, page
from web.selectors import leaked_document_ids, match_status_counts

SPAN_RUN_HEADLINES = ("micro.chars.all.f1", "micro.chars.all.recall", "micro.chars.all.precision")
ROWS_PER_PAGE = 50
# A large run can leak in thousands of documents; the rest are one filter away (match_status=missed).
LEAKED_SHOWN = 300
# The outcomes the span scoring writes as strings (metrics/services/span_scoring.py).
SPAN_MATCH_STATUSES = ("exact", "overlap", "missed", "spurious")
ATTRIBUTE_MATCH_STATUSES = tuple(status.value for status in MatchStatus)
# The API's comparison filters the page's table takes (`format` is the API's: the page redirects there).
FILTER_NAMES = ("scoring", "match_status", "attribute", "document", "entity_type", "attribute_presence")


class RowPagination(RunComparisonApi.Pagination):
    page_size = ROWS_PER_PAGE


def _span_summary(values: dict) -> dict:
    headlines = [
        headline_from_values(
            HeadlineChoice(name, SPAN_HEADLINES[name], MetricScope.OVERALL, "", name), values
        )
        for name in SPAN_RUN_HEADLINES
    ]

    def overall(name: str):
        value = values.get((MetricScope.OVERALL, "", name))
        return None if value is None else value

    leak = {
        "documents_leaked": overall("leakage.any_char.documents_leaked"),
        "rate": overall("leakage.any_char.rate_documents_with_gold"),
        "gold_spans_affected": overall("leakage.any_char.gold_spans_affected"),
        "leaked_characters": overall("leakage.any_char.leaked_characters"),
        "entity_missed": overall("leakage.entity_missed.documents_leaked"),
        "documents": overall("documents_with_gold"),
    }
    types = sorted({key for scope, key, _ in values if scope == MetricScope.ENTITY_TYPE})
    per_type = []
    for entity_type in types:

        def typed(name: str, entity_type: str = entity_type):
            return values.get((MetricScope.ENTITY_TYPE, entity_type, name))

        recall = typed("char_recall")
        per_type.append(
            {
                "entity_type": entity_type,
                "gold": typed("gold"),
                "predicted": typed("predicted"),
                "char_recall": recall,
                "precision": typed("chars_typed.precision"),
                "recall": typed("chars_typed.recall"),
                "f1": typed("chars_typed.f1"),
                "overlap_recall": typed("spans_overlap.recall"),
            }
        )
    points = [
        IntervalPoint(
            row["entity_type"],
            None if row["char_recall"] is None else row["char_recall"].value,
            None if row["char_recall"] is None else row["char_recall"].ci_low,
            None if row["char_recall"] is None else row["char_recall"].ci_high,
            note="" if row["char_recall"] is not None and row["char_recall"].value is not None else "no gold",
        )
        for row in per_type
    ]
    chart = interval_chart(
        points,
        title="Character recall per entity type (any predicted type), with 95% confidence intervals",
        domain=None,
    )
    return {"headlines": headlines, "leak": leak, "per_type": per_type, "chart": chart}


def _attribute_summary(values: dict, labels: dict[str, str], distribution: dict[str, dict[str, int]]) -> dict:
    attribute_ids = [key for key in labels if (MetricScope.ATTRIBUTE, key, "n_gold_instances") in values]
    headlines: list[tuple[str, Headline]] = []
    points = []
    for attribute_id in attribute_ids:
        choice = HeadlineChoice(
            attribute_id, labels[attribute_id], MetricScope.ATTRIBUTE, attribute_id, ATTRIBUTE_MEASURE
        )
        headline = headline_from_values(choice, values)
        headlines.append((attribute_id, headline))
        if headline.value is None and headline.given_prediction is not None:
            given = headline.given_prediction
            points.append(
                IntervalPoint(
                    labels[attribute_id],
                    given.value,
                    given.low,
                    given.high,
                    note="(given a prediction)",
                    emphasised=False,
                )
            )
        else:
            points.append(IntervalPoint(labels[attribute_id], headline.value, headline.low, headline.high))
    chart = interval_chart(
        points,
        title="Accuracy per attribute, with 95% confidence intervals",
        domain=None,
        legend="Hollow dot: accuracy is null (missing predictions); shown given a prediction.",
    )
    bars = [Bar(labels[attribute_id], distribution.get(attribute_id, {})) for attribute_id in attribute_ids]
    distribution_chart = stacked_bar_chart(
        bars, categories=MATCH_STATUS_CATEGORIES, title="Comparison rows per match status, per attribute"
    )
    return {"headlines": headlines, "chart": chart, "distribution_chart": distribution_chart}


def _progress(run: ExperimentRun) -> dict | None:
    """The run's scoring job as `GET /api/v1/jobs/{id}/` serves it (its warnings and errors redacted
    by `jobs_redacted`: no held-back document named) while it is queued or running (the page follows
    it live) or when it failed; None before any job and once it succeeded."""
    job = run.scoring_job
    if job is None or job.state == JobState.SUCCEEDED:
        return None
    return JobOutputSerializer(jobs_redacted([job])[0]).data


def _filters(request: HttpRequest, run: ExperimentRun) -> dict:
    """The comparison filters of the page's query, validated by the API's own serializer for the run's
    kind (an invalid value is the API's 400). An empty value is a form's "any": not a filter."""
    wanted = {name: value for name, value in request.GET.items() if name in FILTER_NAMES and value != ""}
    filters = RunComparisonApi.FilterSerializer(data=wanted, context={"kind": run.kind})
    filters.is_valid(raise_exception=True)
    return {"wanted": wanted, **filters.validated_data}


def _comparison_table(request: HttpRequest, run: ExperimentRun, scoring: Scoring, filters: dict) -> dict:
    rows = comparison_row_list(
        run=run,
        scoring=scoring,
        attribute=filters.get("attribute"),
        match_status=filters.get("match_status"),
        document=filters.get("document"),
        attribute_presence=filters.get("attribute_presence"),
        entity_type=filters.get("entity_type"),
    ).select_related("attribute", "document")
    paginator = RowPagination()
    page_rows = paginator.paginate_queryset(rows, Request(request))
    wanted = filters["wanted"]
    query = urlencode(wanted)
    return {
        "rows": page_rows,
        "filters": wanted,
        "next": paginator.get_next_link(),
        "previous": paginator.get_previous_link(),
        "csv": reverse("run-comparison", args=[run.pk]) + "?" + urlencode({"format": "csv", **wanted}),
        "api": reverse("run-comparison", args=[run.pk]) + (f"?{query}" if query else ""),
    }


@page
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    # The query of `GET /api/v1/runs/{id}/comparison/`, checked as the API checks it (an unknown
    # parameter is its 400), plus the page's own `svg` (a chart to download).
    query_parameters_check(request.GET, known=[*query_parameter_names(RunComparisonApi, "get"), "svg"])
    run = run_get_for_user(user=request.user, run_id=run_id)
    filters = _filters(request, run)
    if "format" in request.GET:
        # A page is HTML; the JSON or CSV of the same query is the API's.
        query = request.GET.copy()
        query.pop("svg", None)
        return redirect(reverse("run-comparison", args=[run.pk]) + "?" + query.urlencode())
    try:
        scoring = scoring_get(run=run, number=filters.get("scoring"))
    except ScoringNotFound:
        if filters.get("scoring") is not None:
            raise
        scoring = None
    context = {
        "run": run,
        "scoring": scoring,
        "progress": _progress(run),
        "is_spans": run.kind == RunKind.SPANS,
    }
    labels = dict(run.project.attributes.values_list("attribute_id", "label"))
    if scoring is not None:
        values = values_by_key(metric_value_list(scoring=scoring))
        table = _comparison_table(request, run, scoring, filters)
        context["table"] = table
        # What the API serves beside the run's numbers (GET /runs/{id}/metrics/): the gold status and
        # the human ceiling, each headline with its entry.
        context["gold_status"] = gold_status_for_scoring(scoring=scoring)
        ceiling = human_ceiling(run, scoring)
        context["ceiling"] = ceiling
        entries = ceiling_by_key(ceiling)
        if run.kind == RunKind.SPANS:
            context["spans"] = _span_summary(values)
            context["spans"]["headlines"] = [
                (headline, entries.get((MetricScope.OVERALL, "", name)))
                for headline, name in zip(context["spans"]["headlines"], SPAN_RUN_HEADLINES, strict=True)
            ]
            leaked = leaked_document_ids(scoring=scoring)
            context["leaked_documents"] = leaked[:LEAKED_SHOWN]
            context["leaked_total"] = len(leaked)
            context["match_statuses"] = SPAN_MATCH_STATUSES
            context["entity_types"] = [row["entity_type"] for row in context["spans"]["per_type"]]
        else:
            distribution = match_status_counts(run=run, scoring=scoring)
            context["attributes"] = _attribute_summary(values, labels, distribution)
            context["attributes"]["headlines"] = [
                (
                    attribute_id,
                    headline,
                    entries.get((MetricScope.ATTRIBUTE, attribute_id, ATTRIBUTE_MEASURE)),
                )
                for attribute_id, headline in context["attributes"]["headlines"]
            ]
            context["match_statuses"] = ATTRIBUTE_MATCH_STATUSES
        context["attribute_choices"] = labels
        summary = context.get("spans") or context.get("attributes")
        charts = {
            "breakdown-chart": summary["chart"],
            "match-status-chart": summary.get("distribution_chart"),
        }
        download = chart_download(request, charts, f"run-{run.pk}")
        if download is not None:
            return download
    return render(request, "web/run.html", context)
