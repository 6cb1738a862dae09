"""Agreement between annotators on attribute values: the figures of docs/agreement.md ("Attributes"),
each with a cluster-bootstrap interval over documents (`<name>_ci`).

A unit is one document's value of one attribute, as `AttributeRatings` holds it: coerced already,
with absent attributes at their missing-annotation default (`attribute_ratings`, docs/agreement.md).
A document with fewer than two values of the attribute is left out of it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from metrics.engine.agreement.libraries import library_alpha, library_kappa
from metrics.engine.agreement.measures import (
    CohenKappa,
    IntervalAlpha,
    NominalAlpha,
    interval_alpha_counts,
    kappa_counts,
    nominal_alpha_counts,
)
from metrics.engine.agreement.spans import with_intervals
from metrics.engine.attributes.types import AttributeType
from metrics.engine.uncertainty.bootstrap import IntervalSettings
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.measures import number_or_none, ratio

NUMERIC = (AttributeType.INTEGER, AttributeType.FLOAT)


@dataclass(frozen=True, slots=True)
class AttributeRatings:
    """One attribute's coerced values: `{document_id: {annotator: value}}` (missing values left out)."""

    attribute_id: str
    type: AttributeType
    ratings: Mapping[str, Mapping[str, Any]]


def _nominal_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _agree(first: Any, second: Any, numeric: bool) -> bool:
    if numeric:
        return math.isclose(float(first), float(second), rel_tol=1e-9, abs_tol=0.0)
    return _nominal_key(first) == _nominal_key(second)


def attribute_agreement(
    attributes: list[AttributeRatings], *, settings: IntervalSettings
) -> list[dict[str, Any]]:
    """The `attributes` list of agreement.json, one entry per attribute in the given order."""
    return [_one_attribute(attribute, settings) for attribute in attributes]


def _one_attribute(attribute: AttributeRatings, settings: IntervalSettings) -> dict[str, Any]:
    numeric = attribute.type in NUMERIC
    units = {
        document_id: dict(values)
        for document_id, values in sorted(attribute.ratings.items())
        if len(values) >= 2
    }
    annotators = sorted({annotator for values in units.values() for annotator in values})
    categories = sorted({_nominal_key(value) for values in units.values() for value in values.values()})
    index = {category: position for position, category in enumerate(categories)}
    statistic: Any
    if numeric:
        measure_name, statistic = "krippendorff_alpha_interval", IntervalAlpha("alpha")
    elif len(annotators) == 2:
        measure_name, statistic = "cohen_kappa", CohenKappa("kappa", categories)
    else:
        measure_name, statistic = "krippendorff_alpha_nominal", NominalAlpha("alpha", categories)
    entry: dict[str, Any] = {
        "attribute_id": attribute.attribute_id,
        "type": str(attribute.type),
        "measure": measure_name,
        "annotators": annotators,
        "documents": len(units),
        "single_annotator_documents": sorted(
            document_id for document_id, values in attribute.ratings.items() if len(values) < 2
        ),
    }
    if not units:
        entry.update(value=None, value_ci=None, percent_agreement=None, percent_agreement_ci=None)
        return entry
    rows: dict[str, dict[str, float]] = {}
    for document_id, values in units.items():
        pairs = list(combinations(values.values(), 2))
        row = {
            "percent.agreeing": float(sum(_agree(first, second, numeric) for first, second in pairs)),
            "percent.pairs": float(len(pairs)),
        }
        if measure_name == "cohen_kappa":
            a, b = (np.array([index[_nominal_key(values[annotator])]]) for annotator in annotators)
            row.update(kappa_counts("kappa", a, b, categories))
        elif numeric:
            row.update(interval_alpha_counts("alpha", [float(value) for value in values.values()]))
        else:
            value_counts = np.zeros((1, len(categories)))
            for value in values.values():
                value_counts[0, index[_nominal_key(value)]] += 1
            row.update(nominal_alpha_counts("alpha", value_counts, categories))
        rows[document_id] = row
    counts = DocumentCounts.from_rows(rows)
    if measure_name == "cohen_kappa":
        value = _kappa_of(units, annotators)
    elif numeric:
        value = _alpha_of(units, annotators, float, "interval")
    else:
        value = _alpha_of(units, annotators, lambda v: index[_nominal_key(v)], "nominal")
    measures = {"value": statistic, "percent_agreement": ratio("percent.agreeing", "percent.pairs")}
    percent = number_or_none(measures["percent_agreement"](counts.totals())[0])
    return entry | with_intervals({"value": value, "percent_agreement": percent}, counts, measures, settings)


def _kappa_of(units: Mapping[str, Mapping[str, Any]], annotators: list[str]) -> float | None:
    first, second = (
        np.array([_nominal_key(values[annotator]) for values in units.values()]) for annotator in annotators
    )
    return library_kappa(first, second)


def _alpha_of(units, annotators, encode, level: str) -> float | None:
    reliability = np.full((len(annotators), len(units)), np.nan)
    for column, values in enumerate(units.values()):
        for annotator, value in values.items():
            reliability[annotators.index(annotator), column] = encode(value)
    return library_alpha(reliability, level)
