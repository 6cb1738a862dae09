"""`/compare/?a=<run>&b=<run>`: the API's run comparison (`runs_compare`) as a table and a forest plot."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from evalproject.api import query_parameter_names, query_parameters_check
from metrics.api.run_pair import RunCompareApi, runs_compare_for_query
from web.charts import IntervalPoint, interval_chart
from web.headlines import GIVEN_PREDICTION, SPAN_HEADLINES
from web.pages import chart_download, page

SPAN_OVERALL = ("micro.chars.all.f1", "micro.chars.all.recall", "leakage.any_char.rate_documents_with_gold")
SPAN_TYPE_MEASURE = "char_recall"
ATTRIBUTE_MEASURE = "accuracy"
SIGNIFICANCE = 0.05
LABELS = {**SPAN_HEADLINES, "leakage.any_char.rate_documents_with_gold": "leak rate (lower is better)"}


def _paired_rows(paired: dict) -> list[dict]:
    """One row per entity type or attribute (and the overall span measures): delta, CI, p, Holm p."""
    rows = []
    if paired["kind"] == "spans":
        metrics = paired["metrics"]
        for name in SPAN_OVERALL:
            if name in metrics:
                rows.append({"label": f"overall: {LABELS[name]}", "note": "", **metrics[name]})
        for name, entry in metrics.items():
            if name.startswith("per_type.") and name.endswith("." + SPAN_TYPE_MEASURE):
                entity_type = name[len("per_type.") : -len("." + SPAN_TYPE_MEASURE)]
                rows.append({"label": f"{entity_type}: character recall", "note": "", **entry})
        return rows
    for attribute in paired["attributes"]:
        metrics = attribute["metrics"]
        entry, note = metrics.get(ATTRIBUTE_MEASURE), ""
        if entry is None:
            continue
        if entry.get("delta") is None and ATTRIBUTE_MEASURE + GIVEN_PREDICTION in metrics:
            entry, note = (
                metrics[ATTRIBUTE_MEASURE + GIVEN_PREDICTION],
                "given a prediction (accuracy is null)",
            )
        rows.append({"label": f"{attribute['label']}: accuracy", "note": note, **entry})
    return rows


@page
def compare_runs(request: HttpRequest) -> HttpResponse:
    # The API's query, checked as the API checks it (an unknown or invalid parameter is its 400),
    # plus the page's own `svg` (a chart to download).
    query_parameters_check(request.GET, known=[*query_parameter_names(RunCompareApi, "get"), "svg"])
    query = request.GET.copy()
    query.pop("svg", None)
    run_a, run_b, body = runs_compare_for_query(user=request.user, query_params=query)
    rows = _paired_rows(body["paired"]) if body["paired"] is not None else []
    points = [
        IntervalPoint(
            row["label"],
            row.get("delta"),
            row.get("ci_low"),
            row.get("ci_high"),
            note="" if row.get("delta") is not None else "no delta",
            emphasised=row.get("p_adjusted") is not None and row["p_adjusted"] < SIGNIFICANCE,
        )
        for row in rows
    ]
    chart = interval_chart(
        points,
        title=f"Delta (run {run_b.pk} minus run {run_a.pk}) with paired 95% confidence intervals",
        domain=None,
        reference=0.0,
        legend=f"Filled dot: Holm-adjusted p < {SIGNIFICANCE}; hollow: not significant. Right of the line: b higher.",
    )
    download = chart_download(request, {"delta-chart": chart}, f"compare-{run_a.pk}-{run_b.pk}")
    if download is not None:
        return download
    return render(
        request,
        "web/compare.html",
        {
            "run_a": run_a,
            "run_b": run_b,
            "body": body,
            "rows": rows,
            "chart": chart,
            "query": query.urlencode(),
            "api": reverse("run-compare") + (f"?{query.urlencode()}" if query else ""),
        },
    )
