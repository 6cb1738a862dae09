"""Which stored metric value a page puts first, and how a null one is explained.

A headline is one MetricValue of the run's scoring, exactly as `GET /runs/{id}/metric-values/` serves
it, with its interval. For span runs the choices are overall measures (character F1 by default); for
attribute runs each attribute's accuracy. By the seed's rule an attribute's accuracy is null when any
prediction is missing; the headline then carries `n_missing_predictions` and the value computed on the
predicted subset (`accuracy_given_prediction`), so the reader never learns only a blank.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from metrics.models import MetricScope, MetricValue

GIVEN_PREDICTION = "_given_prediction"
MISSING = "n_missing_predictions"

SPAN_HEADLINES = {
    "micro.chars.all.f1": "character F1",
    "micro.chars.all.recall": "character recall",
    "micro.chars.all.precision": "character precision",
    "micro.spans_overlap.type_agnostic.recall": "span recall (overlap)",
    "micro.nervaluate.strict.f1": "strict F1 (nervaluate)",
}
SPAN_DEFAULT = "micro.chars.all.f1"
METRIC_LABELS = {
    **SPAN_HEADLINES,
    "micro.spans_overlap.type_agnostic.f1": "span F1 (overlap)",
    "accuracy": "accuracy",
}
ATTRIBUTE_MEASURE = "accuracy"


@dataclass(frozen=True)
class Headline:
    """A metric as a page shows it: value and interval, or why it is blank and what is known instead."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int | None = None
    n_missing: int | None = None
    given_prediction: Headline | None = None

    @property
    def is_null_for_missing_predictions(self) -> bool:
        return self.value is None and bool(self.n_missing)


@dataclass(frozen=True)
class HeadlineChoice:
    """Which value is the headline: `scope`, `scope_key`, `name`, with a label for people."""

    key: str
    label: str
    scope: str
    scope_key: str
    name: str


def headline_choices(*, kind: str, attributes: Iterable[tuple[str, str]]) -> list[HeadlineChoice]:
    """The headlines a project's runs can be ranked by; `attributes` is (attribute_id, label) pairs."""
    if kind == "spans":
        return [
            HeadlineChoice(name, label, MetricScope.OVERALL, "", name)
            for name, label in SPAN_HEADLINES.items()
        ]
    return [
        HeadlineChoice(
            attribute_id, f"{label}: accuracy", MetricScope.ATTRIBUTE, attribute_id, ATTRIBUTE_MEASURE
        )
        for attribute_id, label in attributes
    ]


def headline_from_values(choice: HeadlineChoice, values: dict[tuple[str, str, str], MetricValue]) -> Headline:
    """The headline `choice` out of one scoring's values keyed by (scope, scope_key, name)."""
    value = values.get((choice.scope, choice.scope_key, choice.name))
    missing = values.get((choice.scope, choice.scope_key, MISSING))
    given = values.get((choice.scope, choice.scope_key, choice.name + GIVEN_PREDICTION))
    given_headline = (
        None
        if given is None
        else Headline(choice.label + " given a prediction", given.value, given.ci_low, given.ci_high, given.n)
    )
    n_missing = None if missing is None or missing.value is None else int(missing.value)
    if value is None:
        return Headline(choice.label, None, n_missing=n_missing, given_prediction=given_headline)
    return Headline(
        choice.label,
        value.value,
        value.ci_low,
        value.ci_high,
        value.n,
        n_missing=n_missing,
        given_prediction=given_headline,
    )


def values_by_key(values: Iterable[MetricValue]) -> dict[tuple[str, str, str], MetricValue]:
    return {(value.scope, value.scope_key, value.name): value for value in values}


def ceiling_by_key(ceiling: dict | None) -> dict[tuple[str, str, str], dict]:
    """The entries of a human ceiling (`metrics.services.human_ceiling.human_ceiling`) by the
    (scope, scope_key, name) of the headline value each stands beside."""
    if not ceiling:
        return {}
    return {(entry["scope"], entry["scope_key"], entry["name"]): entry for entry in ceiling["metrics"]}
