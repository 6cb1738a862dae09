"""What a scoring computes before anything is written: the report, metric values and comparison rows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from metrics.pipeline.intervals import IntervalSettings


def posted_documents_note(posted: Iterable[str], scored: Iterable[str], gold_version: int) -> list[str]:
    """The note on posted documents outside the gold version scored against (none when there are none)."""
    ignored = set(posted).difference(scored)
    if not ignored:
        return []
    return [f"{len(ignored)} posted document(s) are not in gold version {gold_version} and are ignored"]


def run_interval_settings(config: dict[str, Any] | None) -> IntervalSettings:
    """The confidence-interval settings of a run's scoring: the offline commands' defaults, overridden
    by the run's configuration key `intervals` (`{"level", "resamples", "seed"}`; `resamples: 0` turns
    intervals off). Raises ValueError naming the bad setting (the scoring job reports it)."""
    given = (config or {}).get("intervals") or {}
    if not isinstance(given, dict):
        raise ValueError("intervals must be a mapping of level, resamples and seed")
    return IntervalSettings(**{name: given[name] for name in ("level", "resamples", "seed") if name in given})


@dataclass(slots=True)
class MetricValueData:
    scope: str
    scope_key: str
    name: str
    value: float | None
    n: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci: dict[str, Any] | None = None  # level, method, resamples, seed

    def set_interval(self, interval: dict[str, Any]) -> None:
        """Take a report's interval (`low`, `high` and its settings) as this value's."""
        self.ci_low, self.ci_high = interval.get("low"), interval.get("high")
        self.ci = {name: interval.get(name) for name in ("level", "method", "resamples", "seed")}


@dataclass(slots=True)
class ComparisonRowData:
    """One comparison row; `document_id` is the external id, resolved to a pk when written."""

    document_id: str
    columns: dict[str, Any]
    attribute_id: str | None = None
    entity_type: str = ""
    match_status: str = ""
    attribute_presence: bool | None = None
    is_correct: bool | None = None


@dataclass
class ScoringResult:
    report: dict[str, Any]
    settings: dict[str, Any]
    document_ids: list[str]
    metric_values: list[MetricValueData]
    rows: list[ComparisonRowData]
    warnings: list[str] = field(default_factory=list)
