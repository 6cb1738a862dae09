"""Confidence intervals by cluster (document) bootstrap, percentile method.

Each metric is computed from the summed counts of B resamples of the documents (`resampling`); the
interval is the (alpha/2, 1 - alpha/2) percentile pair of those values, alpha = 1 - level, with numpy's
linear interpolation (as `scipy.stats.bootstrap(method="percentile")`); its null rule is
docs/semantics.md section 3's.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import numpy as np

from .counts import DocumentCounts
from .measures import Measure, MetricDefinition, as_measure, columns_read
from .resampling import WordSums, resampled_column_sums, resampled_words

DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 2_000
DEFAULT_SEED = 20_260_808
BOOTSTRAP_METHOD = "cluster_bootstrap_percentile"

Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval and what reproduces it (`resamples`, `seed`: None for exact methods)."""

    low: float | None
    high: float | None
    level: float
    method: str
    resamples: int | None = None
    seed: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def stored(self) -> dict[str, Any] | None:
        """`as_dict()`, or null for an undefined interval (its metric is null)."""
        return None if self.low is None or self.high is None else self.as_dict()


@dataclass(frozen=True, slots=True)
class IntervalSettings:
    """Confidence level, bootstrap resamples (0: no intervals) and the seed of the resampling."""

    level: float = DEFAULT_LEVEL
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        problems = interval_settings_problems(self.level, self.resamples, self.seed)
        if problems:
            raise ValueError("; ".join(f"{name}: {message}" for name, message in problems.items()))

    @property
    def enabled(self) -> bool:
        return self.resamples > 0

    def as_config(self, *, exact_method: str | None = None) -> dict[str, Any]:
        """What a result records about its intervals (`config.intervals`, `intervals_config`)."""
        config: dict[str, Any] = {
            "level": self.level,
            "resamples": self.resamples,
            "seed": self.seed,
            "method": BOOTSTRAP_METHOD if self.enabled else None,
        }
        if exact_method is not None:
            config["leakage_method"] = exact_method if self.enabled else None
        return config

    def check_resampled(self) -> None:
        """Raise ValueError on 0 resamples: they turn intervals off, but leave a bootstrap nothing to draw."""
        if not self.enabled:
            raise ValueError("resamples: must be an integer >= 1 for a bootstrap, got 0")


def interval_settings_problems(level: Any, resamples: Any, seed: Any) -> dict[str, str]:
    """`{setting: what is wrong}` for bad values (empty when all are fine), for messages naming a flag."""
    problems: dict[str, str] = {}
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        problems["level"] = f"must be a number between 0 and 1 (exclusive), got {level!r}"
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 0:
        problems["resamples"] = f"must be an integer >= 0 (0 turns intervals off), got {resamples!r}"
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        problems["seed"] = f"must be an integer >= 0, got {seed!r}"
    return problems


DEFAULT_INTERVALS = IntervalSettings()


def percentile_bounds(values: np.ndarray, level: float) -> tuple[float | None, float | None]:
    """(alpha/2, 1 - alpha/2) percentiles of the defined (non-NaN) values; (None, None) if none is."""
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return None, None
    alpha = 1.0 - level
    low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def cluster_bootstrap_intervals(
    counts: DocumentCounts,
    metrics: Mapping[Key, Measure | MetricDefinition],
    settings: IntervalSettings = DEFAULT_INTERVALS,
    *,
    consume: bool = False,
    word_sums: WordSums = resampled_words,
) -> dict[Key, Interval]:
    """Percentile intervals of many metrics (keyed by any hashable names) from one set of resamples:
    a metric costs one vectorised evaluation over the B sums, not another bootstrap.

    `consume`: `counts` gives up its columns as they are resampled, so that a large table and the
    resampling's copy are not held together. `word_sums`: who sums the resamples (the same sums).
    """
    settings.check_resampled()
    level, resamples, seed = settings.level, settings.resamples, settings.seed
    given = counts
    counts = counts.with_columns(columns_read(metrics.values()))
    if consume:
        given.columns = {}
    totals = counts.totals()
    resampled: dict[str, np.ndarray] | None = None
    intervals: dict[Key, Interval] = {}
    for name, metric in metrics.items():
        measure = as_measure(metric)
        if counts.n_documents == 0 or np.isnan(measure(totals)[0]):
            intervals[name] = Interval(None, None, level, BOOTSTRAP_METHOD, resamples, seed)
            continue
        if resampled is None:
            (resampled,) = resample_columns([counts], resamples, seed, consume=consume, word_sums=word_sums)
        low, high = percentile_bounds(measure(resampled), level)
        intervals[name] = Interval(low, high, level, BOOTSTRAP_METHOD, resamples, seed)
    return intervals


def resample_columns(
    runs: Sequence[DocumentCounts],
    resamples: int,
    seed: int,
    *,
    consume: bool = False,
    word_sums: WordSums = resampled_words,
) -> list[dict[str, np.ndarray]]:
    """`{column: B summed values}` of each run's counts, from the same B resamples of their documents
    (the same documents in every run, so a paired comparison keeps its pairs); a column a run lacks is
    zero in it. `consume`: the runs give up their columns, each once it is resampled."""
    names = sorted(set().union(*(run.columns for run in runs)))
    columns = [run.column(name) for run in runs for name in names]
    if consume:
        for run in runs:
            run.columns = {}
    sums = resampled_column_sums(
        columns, runs[0].n_documents, resamples, seed, consume=consume, word_sums=word_sums
    )
    return [{name: sums[:, k * len(names) + j] for j, name in enumerate(names)} for k in range(len(runs))]
