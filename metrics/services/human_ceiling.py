"""The human ceiling beside a model's numbers, as docs/agreement.md describes it ("The human
ceiling"). The paired tests are those of `metrics.services.run_pair.scorings_paired_report`, with
delta = model - human, served with the run's numbers by the API and the pages.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from annotations.models import GoldKind
from experiments.models import ExperimentRun, RunSource
from metrics.models import HumanCeilingPair, MetricScope, MetricValue, Scoring
from metrics.pipeline.intervals import DEFAULT_INTERVALS
from metrics.services.run_pair import scorings_paired_report

SPAN_HEADLINES = (
    ("micro.chars.all.f1", "F1 (characters)"),
    ("micro.spans_overlap.type_agnostic.f1", "F1 (overlap)"),
    ("micro.nervaluate.strict.f1", "F1 (strict)"),
)
ATTRIBUTE_HEADLINE = ("accuracy", "accuracy")


def _figure(value: float | None, ci_low: float | None, ci_high: float | None) -> str:
    if value is None:
        return "n/a"
    if ci_low is None or ci_high is None:
        return f"{value:.2f}"
    return f"{value:.2f} [{ci_low:.2f}, {ci_high:.2f}]"


def _values(
    scoring_ids: list[int], keys: list[tuple[str, str, str]]
) -> dict[tuple[int, str, str, str], MetricValue]:
    """The headline values of the scorings, by (scoring id, scope, scope_key, name), in one query."""
    wanted = {name for _, _, name in keys}
    return {
        (value.scoring_id, value.scope, value.scope_key, value.name): value
        for value in MetricValue.objects.filter(scoring_id__in=scoring_ids, name__in=wanted).only(
            "scoring_id", "scope", "scope_key", "name", "value", "ci_low", "ci_high"
        )
    }


def _headline_keys(run: ExperimentRun, scoring: Scoring) -> list[tuple[tuple[str, str, str], str]]:
    if run.kind == GoldKind.SPANS:
        return [((MetricScope.OVERALL, "", name), label) for name, label in SPAN_HEADLINES]
    attribute_ids = (
        MetricValue.objects.filter(scoring=scoring, scope=MetricScope.ATTRIBUTE, name=ATTRIBUTE_HEADLINE[0])
        .order_by("scope_key")
        .values_list("scope_key", flat=True)
    )
    return [((MetricScope.ATTRIBUTE, key, ATTRIBUTE_HEADLINE[0]), f"{key} accuracy") for key in attribute_ids]


def _paired_result(report: dict[str, Any], key: tuple[str, str, str]) -> dict[str, Any] | None:
    if report.get("kind") == GoldKind.SPANS:
        return report.get("metrics", {}).get(key[2])
    for entry in report.get("attributes", []):
        if entry["attribute_id"] == key[1]:
            return entry["metrics"].get(key[2])
    return None


def _latest_scorings(run: ExperimentRun, scoring: Scoring, **filters) -> list[Scoring]:
    """The latest complete scoring on `scoring`'s gold version of each other run of `run`'s project and
    kind (those of `filters`), by run name."""
    found = (
        Scoring.objects.filter(
            run__project_id=run.project_id,
            run__kind=run.kind,
            gold_version_id=scoring.gold_version_id,
            is_complete=True,
            **filters,
        )
        .exclude(run_id=run.pk)
        .select_related("run", "gold_version")
        .defer("report", "document_ids", "run__config")
        .order_by("run__name", "run_id", "-number")
    )
    latest: dict[int, Scoring] = {}
    for other in found:
        latest.setdefault(other.run_id, other)
    return list(latest.values())


def _paired_figures(
    run: ExperimentRun,
    scoring: Scoring,
    humans: list[tuple[ExperimentRun, Scoring]],
    keys: list[tuple[str, str, str]],
) -> dict[int, dict[str, Any]]:
    """Per human scoring id: the stored paired test of `scoring` against it (HumanCeilingPair),
    computed and stored first when missing. Paired tests cost a second each; reads cost a query."""
    wanted = asdict(DEFAULT_INTERVALS)
    stored = {
        pair.human_scoring_id: pair.result
        for pair in HumanCeilingPair.objects.filter(
            scoring_id=scoring.pk, human_scoring_id__in=[human_scoring.pk for _, human_scoring in humans]
        )
        if pair.settings == wanted
    }
    computed = []
    for human, human_scoring in humans:
        if human_scoring.pk in stored:
            continue
        report = scorings_paired_report(run_a=human, scoring_a=human_scoring, run_b=run, scoring_b=scoring)
        result = {
            "documents_compared": report.get("documents_compared"),
            "metrics": {"|".join(key): _paired_result(report, key) for key in keys},
        }
        stored[human_scoring.pk] = result
        computed.append(
            HumanCeilingPair(
                scoring_id=scoring.pk, human_scoring_id=human_scoring.pk, settings=wanted, result=result
            )
        )
    # Two readers may compute the same pair at once: the first stored stays.
    HumanCeilingPair.objects.bulk_create(computed, ignore_conflicts=True)
    return stored


def _figure_of(value: MetricValue | None) -> dict[str, float | None]:
    return {name: getattr(value, name, None) for name in ("value", "ci_low", "ci_high")}


def human_ceiling(run: ExperimentRun, scoring: Scoring) -> dict[str, Any] | None:
    """The human ceiling of `run`'s `scoring` (module docstring); None when no human run was scored on
    its gold version. The paired tests are stored (HumanCeilingPair): computed when the later of the
    two runs is scored (`human_ceiling_store`), else on the first read."""
    if getattr(scoring, "has_human_scorings", True) is False:
        return None  # known from the scoring's own query (metrics.selectors.with_gold_context)
    humans = [(human.run, human) for human in _latest_scorings(run, scoring, run__source=RunSource.HUMAN)]
    if not humans:
        return None
    headlines = _headline_keys(run, scoring)
    keys = [key for key, _ in headlines]
    values = _values([scoring.pk, *(human_scoring.pk for _, human_scoring in humans)], keys)
    figures = _paired_figures(run, scoring, humans, keys)
    metrics = []
    for key, label in headlines:
        model = _figure_of(values.get((scoring.pk, *key)))
        entry: dict[str, Any] = {"scope": key[0], "scope_key": key[1], "name": key[2], "model": model}
        entry["annotators"] = []
        text = [f"{label} {_figure(**model)}"]
        for human, human_scoring in humans:
            value = _figure_of(values.get((human_scoring.pk, *key)))
            pair = figures[human_scoring.pk]
            paired = pair["metrics"].get("|".join(key)) or {}
            high = paired.get("ci_high")
            delta = paired.get("delta")
            entry["annotators"].append(
                {
                    "run": human.pk,
                    "name": human.name,
                    "scoring": human_scoring.number,
                    **value,
                    "paired": {
                        "human": paired.get("a"),
                        "model": paired.get("b"),
                        "delta": delta,
                        "ci_low": paired.get("ci_low"),
                        "ci_high": high,
                        "p_value": paired.get("p_value"),
                        "documents_compared": pair.get("documents_compared"),
                    },
                    "model_below": None if delta is None or high is None else bool(high < 0),
                }
            )
            text.append(f"{human.name} {_figure(**value)}")
        entry["text"] = "; ".join(text)
        metrics.append(entry)
    return {
        "gold_version": scoring.gold_version.number,
        "level": DEFAULT_INTERVALS.level,
        "method": "paired_cluster_bootstrap_percentile",
        "human_runs": [
            {"run": human.pk, "name": human.name, "scoring": human_scoring.number}
            for human, human_scoring in humans
        ],
        "metrics": metrics,
    }


def human_ceiling_store(*, scoring: Scoring) -> None:
    """Compute and store the paired tests a newly stored scoring takes part in. A model run's scoring:
    against each human run's latest scoring on the same gold version. A human run's: also each other
    run's latest scoring on that version against it."""
    run = scoring.run
    human_ceiling(run, scoring)
    if run.source == RunSource.HUMAN:
        for other in _latest_scorings(run, scoring):
            if other.run.scorings.filter(is_complete=True, number__gt=other.number).exists():
                continue  # the run was rescored on another version since: its ceiling reads that one
            human_ceiling(other.run, other)
