"""Paired comparison of two runs scored on the same documents and the same gold version (docs/uncertainty.md).

The interval of delta = b - a is the percentile interval of delta* = b* - a*, dropping resamples where
either run's metric is undefined. Two-sided p-value from the D defined delta*:
    p = min(1, 2 * (min(#{delta* <= 0}, #{delta* >= 0}) + 1) / (D + 1))
the +1 keeping a Monte-Carlo p-value above 0 (it can not resolve below 1 / (D + 1)). Identical runs
give delta* = 0 in every resample, hence p = 1 exactly (a column equal in both runs is summed once).
A metric without a Holm `family` is its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Generic

import numpy as np

from .bootstrap import (
    DEFAULT_INTERVALS,
    IntervalSettings,
    Key,
    percentile_bounds,
    resample_columns,
)
from .counts import DocumentCounts
from .exact import holm_adjust, mcnemar_exact
from .measures import Measure, MetricDefinition, as_measure, columns_read, number_or_none

P_BOOTSTRAP = "paired_bootstrap"
P_MCNEMAR = "mcnemar_exact"


@dataclass(frozen=True, slots=True)
class PairedResult:
    """One compared metric. `as_dict()`: a, b, delta, ci_low, ci_high, p_value, p_adjusted."""

    a: float | None
    b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    p_method: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {field.name: getattr(self, field.name) for field in fields(self) if field.name != "p_method"}


@dataclass(frozen=True, slots=True)
class PairedRuns(Generic[Key]):
    metrics: dict[Key, PairedResult]
    settings: IntervalSettings
    documents_compared: int
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.settings.level,
            "method": "paired_cluster_bootstrap_percentile",
            "resamples": self.settings.resamples,
            "seed": self.settings.seed,
            "documents_compared": self.documents_compared,
            "only_in_a": list(self.only_in_a),
            "only_in_b": list(self.only_in_b),
            "metrics": {name: result.as_dict() for name, result in self.metrics.items()},
            "p_value_methods": {name: result.p_method for name, result in self.metrics.items()},
        }


def bootstrap_p_value(deltas: np.ndarray) -> float | None:
    """Two-sided p from the defined bootstrap deltas (formula in the module docstring)."""
    defined = deltas[~np.isnan(deltas)]
    if defined.size == 0:
        return None
    smaller_tail = min(np.count_nonzero(defined <= 0), np.count_nonzero(defined >= 0))
    return min(1.0, 2.0 * (smaller_tail + 1) / (defined.size + 1))


def discordant_rows(a: DocumentCounts, b: DocumentCounts, correct: str, rows: str) -> tuple[int, int]:
    """(rows a got right and b wrong, rows a got wrong and b right) over rows scored in both runs."""
    rows_a, rows_b = a.column(rows), b.column(rows)
    right_a, right_b = a.column(correct), b.column(correct)
    for values in (rows_a, rows_b, right_a, right_b):
        if not np.all((values == 0) | (values == 1)):
            raise ValueError(f"McNemar needs at most one {rows!r} row per document with 0/1 {correct!r}")
    both = (rows_a == 1) & (rows_b == 1)
    only_a_right = int(np.count_nonzero(both & (right_a == 1) & (right_b == 0)))
    only_b_right = int(np.count_nonzero(both & (right_a == 0) & (right_b == 1)))
    return only_a_right, only_b_right


def compare_runs(
    counts_a: DocumentCounts,
    counts_b: DocumentCounts,
    metrics: Mapping[Key, Measure | MetricDefinition],
    settings: IntervalSettings = DEFAULT_INTERVALS,
) -> PairedRuns[Key]:
    """Compare run b against run a (module docstring), each given the counts of the documents it
    predicted (not those whose extraction failed or that were never posted)."""
    settings.check_resampled()
    ids_a, ids_b = set(counts_a.document_ids), set(counts_b.document_ids)
    common = sorted(ids_a & ids_b)
    read = columns_read(metrics.values())
    a = counts_a.with_columns(read).restricted_to(common)
    b = counts_b.with_columns(read).restricted_to(common)
    totals_a, totals_b = a.totals(), b.totals()
    resampled: list[dict[str, np.ndarray]] | None = None
    raw: dict[Key, PairedResult] = {}
    for name, metric in metrics.items():
        measure = as_measure(metric)
        point_a = number_or_none(measure(totals_a)[0]) if common else None
        point_b = number_or_none(measure(totals_b)[0]) if common else None
        if point_a is None or point_b is None:
            raw[name] = PairedResult(point_a, point_b, None, None, None, None, None)
            continue
        if resampled is None:
            resampled = resample_columns([a, b], settings.resamples, settings.seed)
        deltas = measure(resampled[1]) - measure(resampled[0])
        low, high = percentile_bounds(deltas, settings.level)
        correctness = metric.correctness if isinstance(metric, MetricDefinition) else None
        if correctness is not None:
            p_value, p_method = mcnemar_exact(*discordant_rows(a, b, *correctness)), P_MCNEMAR
        else:
            p_value, p_method = bootstrap_p_value(deltas), P_BOOTSTRAP
        raw[name] = PairedResult(point_a, point_b, point_b - point_a, low, high, p_value, None, p_method)
    return PairedRuns(
        metrics=_holm_by_family(raw, metrics),
        settings=settings,
        documents_compared=len(common),
        only_in_a=tuple(sorted(ids_a - ids_b)),
        only_in_b=tuple(sorted(ids_b - ids_a)),
    )


def _holm_by_family(
    raw: dict[Key, PairedResult], metrics: Mapping[Key, Measure | MetricDefinition]
) -> dict[Key, PairedResult]:
    # A metric without a family is a family of one (keyed by its own name, apart from named families).
    families: dict[tuple[bool, Hashable], list[Key]] = defaultdict(list)
    for name, metric in metrics.items():
        family = metric.family if isinstance(metric, MetricDefinition) else None
        families[(True, family) if family is not None else (False, name)].append(name)
    adjusted: dict[Key, PairedResult] = {}
    for members in families.values():
        for name, p in zip(members, holm_adjust([raw[name].p_value for name in members]), strict=True):
            adjusted[name] = replace(raw[name], p_adjusted=p)
    return {name: adjusted[name] for name in raw}
