"""`/`: the user's projects. `/projects/<slug>/`: runs, leaderboard, split panel and gold versions."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from annotations.roles import Role
from annotations.selectors import attribute_specs, gold_version_list, project_get_for_user
from experiments.selectors import run_list
from experiments.splits import split_status
from metrics.selectors import gold_status_for_scoring
from metrics.services.agreement import agreement_latest
from metrics.services.human_ceiling import human_ceiling
from web.charts import IntervalPoint, interval_chart
from web.headlines import Headline, ceiling_by_key, headline_choices, headline_from_values
from web.pages import chart_download, page
from web.selectors import (
    gold_versions_with_previous,
    headline_values,
    latest_scorings,
    project_kind,
    project_summaries,
    runs_with_config,
)


@page
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "web/home.html", {"projects": project_summaries(user=request.user)})


def _leaderboard_point(run, headline: Headline | None) -> IntervalPoint:
    label = f"#{run.pk} {run.name}"
    href = reverse("web:run", args=[run.pk])
    if headline is None:
        return IntervalPoint(label, None, href=href, note=f"not scored ({run.status})")
    if headline.value is None and headline.given_prediction is not None:
        given = headline.given_prediction
        missing = f"{headline.n_missing} missing predictions; " if headline.n_missing else ""
        return IntervalPoint(
            label,
            given.value,
            given.low,
            given.high,
            href=href,
            note=f"(null: {missing}given a prediction)",
            emphasised=False,
        )
    return IntervalPoint(label, headline.value, headline.low, headline.high, href=href)


def _rank(point: IntervalPoint) -> tuple[int, float]:
    # Runs with a headline first, best first; then those shown given a prediction; unscored last.
    if point.value is None:
        return (2, 0.0)
    return (0 if point.emphasised else 1, -point.value)


def _agreement(project) -> dict | None:
    """The latest agreement result, as `GET /api/v1/projects/{slug}/agreement/` answers it."""
    job = agreement_latest(project=project)
    if job is None:
        return None
    return {"job": job.pk, "computed_at": job.finished_at, **job.result}


@page
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
    kind = project_kind(project=project)
    scored_attributes = [
        (spec.attribute_id, spec.label) for spec in attribute_specs(project=project) if spec.is_scored
    ]
    choices = headline_choices(kind=kind, attributes=scored_attributes)
    chosen = next((choice for choice in choices if choice.key == request.GET.get("metric")), None)
    chosen = chosen or (choices[0] if choices else None)

    runs = list(run_list(project=project).order_by("-id"))
    scorings = latest_scorings(runs=runs)
    values = headline_values(scorings=scorings.values(), choice=chosen) if chosen else {}
    rows = []
    points = []
    for run in runs:
        scoring = scorings.get(run.pk)
        headline = (
            headline_from_values(chosen, values.get(scoring.pk, {}))
            if scoring is not None and chosen
            else None
        )
        rows.append(
            {
                "run": run,
                "scoring": scoring,
                "headline": headline,
                # Beside the run's numbers, as the API serves them: the gold status and the human
                # ceiling of the chosen headline.
                "gold_status": None if scoring is None else gold_status_for_scoring(scoring=scoring),
                "ceiling": None
                if scoring is None or chosen is None
                else ceiling_by_key(human_ceiling(run, scoring)).get(
                    (chosen.scope, chosen.scope_key, chosen.name)
                ),
            }
        )
        points.append(_leaderboard_point(run, headline))
    points.sort(key=_rank)
    chart = (
        interval_chart(
            points,
            title=f"Runs ranked by {chosen.label}, with 95% confidence intervals",
            domain=None,
            legend="Hollow dot: the headline is null (missing predictions); shown given a prediction.",
        )
        if chosen and runs
        else None
    )
    download = chart_download(request, {"leaderboard-chart": chart}, f"{project.slug}")
    if download is not None:
        return download
    status = split_status(project=project)
    chosen_runs = (
        runs_with_config(project=project, config_hash=status["chosen_config_hash"])
        if status["chosen_config_hash"]
        else []
    )
    versions = list(gold_version_list(project=project).order_by("-number"))
    return render(
        request,
        "web/project.html",
        {
            "project": project,
            "kind": kind,
            "choices": choices,
            "chosen": chosen,
            "rows": rows,
            "leaderboard": chart,
            "split": status,
            "chosen_runs": chosen_runs,
            "gold_versions": gold_versions_with_previous(versions=versions),
            "gold_kinds": len({version.kind for version in versions}),
            "agreement": _agreement(project),
            "scored_runs": [row["run"] for row in rows if row["scoring"] is not None],
        },
    )
