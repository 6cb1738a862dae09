"""Uncertainty and significance for the engine's metrics (issue 8), framework-free.

- `cluster_bootstrap_intervals`: percentile intervals by resampling documents.
- `clopper_pearson`: exact intervals for leakage rates.
- `compare_runs`: paired comparison of two runs (paired bootstrap, exact McNemar, Holm).
- `span_metrics`, `attribute_metrics`: the issue's metrics over the engines' per-document counts.

Inputs are per-document counts (`DocumentCounts`); nothing here re-runs the engine.
"""

from .bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    IntervalSettings,
    cluster_bootstrap_intervals,
    interval_settings_problems,
)
from .counts import DocumentCounts
from .exact import CLOPPER_PEARSON_METHOD, clopper_pearson, holm_adjust, mcnemar_exact
from .measures import MetricDefinition, f1, precision, ratio, recall
from .paired import PairedRuns, bootstrap_p_value, compare_runs

__all__ = [
    "CLOPPER_PEARSON_METHOD",
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "DocumentCounts",
    "Interval",
    "IntervalSettings",
    "MetricDefinition",
    "PairedRuns",
    "bootstrap_p_value",
    "clopper_pearson",
    "cluster_bootstrap_intervals",
    "compare_runs",
    "f1",
    "holm_adjust",
    "interval_settings_problems",
    "mcnemar_exact",
    "precision",
    "ratio",
    "recall",
]
