"""What a scoring computes before anything is written: the report, metric values and comparison rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ProgressCallback = Callable[[int, int], None]
"""Called with (documents scored, documents to score) after each chunk."""


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
