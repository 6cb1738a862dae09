"""Metrics as functions of summed counts, shaped for resampling.

A `Measure` takes `{column: array of sums}` (one entry per resample, or one for the point estimate)
and returns the metric of each entry, NaN where it is undefined: a zero denominator, or, by the seed's
missing-prediction rule, a set holding a missing prediction (`null_if_any`; docs/semantics.md sections
1-2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

Sums = Mapping[str, np.ndarray]


class Measure(Protocol):
    """Metric values from summed counts; `columns`: the count columns it reads (the only ones resampled)."""

    @property
    def columns(self) -> frozenset[str]: ...

    def __call__(self, sums: Sums) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class MetricDefinition:
    """A metric for intervals and comparisons. `family`: the metrics a comparison adjusts together with
    Holm (docs/uncertainty.md). `correctness` names the (correct, rows) count columns when every document
    holds at most one row of this metric: a comparison then tests it with the exact McNemar test on the
    discordant rows."""

    measure: Measure
    family: str | None = None
    correctness: tuple[str, str] | None = None


def divided(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator as float64, NaN where denominator == 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def number_or_none(value: float) -> float | None:
    """A metric value as results store it: undefined (NaN) is null."""
    return None if np.isnan(value) else float(value)


def summed(sums: Sums, column: str) -> np.ndarray:
    """A summed column; a column no document has is zero (the count never occurred)."""
    found = sums.get(column)
    if found is not None:
        return found
    length = len(next(iter(sums.values()))) if sums else 1
    return np.zeros(length)


def as_measure(metric: Measure | MetricDefinition) -> Measure:
    return metric.measure if isinstance(metric, MetricDefinition) else metric


def columns_read(metrics: Iterable[Measure | MetricDefinition]) -> frozenset[str]:
    """The count columns these metrics read, the `correctness` columns a comparison reads among them."""
    needed: frozenset[str] = frozenset()
    for metric in metrics:
        needed |= as_measure(metric).columns
        if isinstance(metric, MetricDefinition) and metric.correctness is not None:
            needed |= frozenset(metric.correctness)
    return needed


@dataclass(frozen=True, slots=True)
class Total:
    """A weighted sum of columns (`{column: weight}`); with weights of 1, integer counts stay integers."""

    terms: Mapping[str, float]

    @property
    def columns(self) -> frozenset[str]:
        return frozenset(self.terms)

    def __call__(self, sums: Sums) -> np.ndarray:
        # A weight of 1 multiplies nothing: macro reads 100,000-row columns, a pass over each saved.
        return sum(
            summed(sums, column) if weight == 1.0 else weight * summed(sums, column)
            for column, weight in self.terms.items()
        )


Terms = str | Mapping[str, float] | Total


@dataclass(frozen=True, slots=True)
class Ratio:
    """numerator / denominator; NaN where the denominator is 0 or any `null_if_any` column is > 0."""

    numerator: Total
    denominator: Total
    null_if_any: tuple[str, ...] = ()

    @property
    def columns(self) -> frozenset[str]:
        return self.numerator.columns | self.denominator.columns | frozenset(self.null_if_any)

    def __call__(self, sums: Sums) -> np.ndarray:
        values = divided(self.numerator(sums), self.denominator(sums))
        for column in self.null_if_any:
            values[summed(sums, column) > 0] = np.nan
        return values


@dataclass(frozen=True, slots=True)
class HarmonicMean:
    """2ab / (a + b), 0 when a + b = 0, NaN when either is undefined (F1 from precision and recall)."""

    first: Measure
    second: Measure

    @property
    def columns(self) -> frozenset[str]:
        return columns_read([self.first, self.second])

    def __call__(self, sums: Sums) -> np.ndarray:
        first, second = self.first(sums), self.second(sums)
        total = first + second
        out = np.full(total.shape, np.nan)
        np.divide(2 * (first * second), total, out=out, where=total > 0)
        out[total == 0] = 0.0
        return out


def ratio(numerator: Terms, denominator: Terms, *, null_if_any: tuple[str, ...] = ()) -> Ratio:
    """numerator / denominator (see `Ratio`); terms are a column name, `{column: weight}` or a `Total`."""
    totals = (
        terms if isinstance(terms, Total) else Total({terms: 1.0} if isinstance(terms, str) else terms)
        for terms in (numerator, denominator)
    )
    return Ratio(*totals, tuple(null_if_any))


def precision(tp: str, fp: str, *, null_if_any: tuple[str, ...] = ()) -> Ratio:
    """tp / (tp + fp), defined when tp + fp > 0."""
    return ratio(tp, {tp: 1.0, fp: 1.0}, null_if_any=null_if_any)


def recall(tp: str, fn: str, *, null_if_any: tuple[str, ...] = ()) -> Ratio:
    """tp / (tp + fn), defined when tp + fn > 0."""
    return ratio(tp, {tp: 1.0, fn: 1.0}, null_if_any=null_if_any)


def f1(tp: str, fp: str, fn: str, *, null_if_any: tuple[str, ...] = ()) -> Ratio:
    """2tp / (2tp + fp + fn), defined when 2tp + fp + fn > 0."""
    return ratio({tp: 2.0}, {tp: 2.0, fp: 1.0, fn: 1.0}, null_if_any=null_if_any)
