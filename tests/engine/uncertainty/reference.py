"""The bootstrap weights by their definition, for tests to check the resampling against, and one
metric's interval."""

from __future__ import annotations

import numpy as np

from metrics.engine.uncertainty.bootstrap import Interval, IntervalSettings, cluster_bootstrap_intervals
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.measures import Measure, MetricDefinition


def reference_weights(n_documents: int, resamples: int, seed: int) -> np.ndarray:
    """Entry [r, i]: how often resample r draws document i, when every resample draws its n documents
    as `default_rng(seed).integers(0, n, size=n)`, one resample after the other."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((resamples, n_documents), dtype=np.float64)
    for row in weights:
        row[:] = np.bincount(rng.integers(0, n_documents, size=n_documents), minlength=n_documents)
    return weights


def cluster_bootstrap_ci(counts: DocumentCounts, metric: Measure | MetricDefinition, **settings) -> Interval:
    """The percentile interval of one metric (`cluster_bootstrap_intervals` of it alone)."""
    return cluster_bootstrap_intervals(counts, {"metric": metric}, IntervalSettings(**settings))["metric"]
