"""Per-attribute counts and metrics, computed from comparison rows (docs/semantics.md section 2).

A row is *scored* when its gold value is valid and not null: invalid gold is only counted
(`n_invalid_gold`), a null gold (from a null missing default) is left out. A set of scored rows with
a missing prediction gets null scores, since scoring only the predicted rows would flatter a pipeline
that fails often; the source strata follow that rule and get no `_given_prediction` variant.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from metrics.engine.attributes.comparison import SOURCE_CHECKED_TYPES
from metrics.engine.attributes.custom_metrics import CustomMetric, custom_metric_value
from metrics.engine.attributes.types import (
    AttributeResult,
    AttributeSpec,
    AttributeType,
    ComparisonRow,
    MatchStatus,
)
from metrics.engine.uncertainty.measures import Ratio, f1, number_or_none, precision, ratio, recall

COUNT_COLUMNS: tuple[str, ...] = (
    "n_gold_instances",
    "n_good_source_instances",
    "n_good_citation_instances",
    "n_missing_predictions",
    "n_invalid_gold",
)

NUMERIC_TYPES = frozenset({AttributeType.INTEGER, AttributeType.FLOAT})
SCORED_TYPES = frozenset(
    {AttributeType.BOOL, AttributeType.STRING, AttributeType.INTEGER, AttributeType.FLOAT}
)
STRATA: tuple[str, ...] = ("_given_good_source", "_given_bad_source")
GIVEN_PREDICTION = "_given_prediction"

# Every score in display order, with the types it applies to.
_SCORES: tuple[tuple[str, frozenset[AttributeType]], ...] = (
    ("accuracy", SCORED_TYPES),
    ("precision", frozenset({AttributeType.BOOL})),
    ("recall", frozenset({AttributeType.BOOL})),
    ("f1_score", frozenset({AttributeType.BOOL})),
    ("edit_distance_match_rate", frozenset({AttributeType.STRING})),
    ("mean_absolute_error", NUMERIC_TYPES),
    ("mean_absolute_percentage_error", NUMERIC_TYPES),
)
_SCORE_NAMES = {type_: tuple(name for name, types in _SCORES if type_ in types) for type_ in SCORED_TYPES}


# A MatchStatus as the `status` column holds it (-1: no status).
STATUS_CODES: dict[MatchStatus | None, int] = {
    None: -1,
    **{status: code for code, status in enumerate(MatchStatus)},
}
_EXACT = STATUS_CODES[MatchStatus.EXACT_MATCH]
_NEAR = STATUS_CODES[MatchStatus.NEAR_MATCH]
_TRISTATE = {None: -1, False: 0, True: 1}
_NUMBER_CLASSES = frozenset({bool, int, float})


@dataclass(frozen=True)
class MetricColumns:
    """What the metrics read of comparison rows: one numpy column per field, in row order, each
    defined by the row field `metric_columns` reads it from."""

    attribute: np.ndarray
    valid: np.ndarray
    gold_present: np.ndarray
    predicted: np.ndarray
    gold_number: np.ndarray
    predicted_number: np.ndarray
    in_context: np.ndarray
    in_citation: np.ndarray
    status: np.ndarray

    def select(self, mask: np.ndarray) -> MetricColumns:
        return MetricColumns(*(getattr(self, name)[mask] for name in _COLUMN_NAMES))

    @classmethod
    def joined(cls, parts: Sequence[MetricColumns]) -> MetricColumns:
        """The columns of consecutive parts of a run's rows, in order."""
        if not parts:
            return metric_columns([], {})
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in _COLUMN_NAMES))


_COLUMN_NAMES = tuple(field.name for field in fields(MetricColumns))


def _number(value: object) -> float:
    return float(value) if value.__class__ in _NUMBER_CLASSES else math.nan  # type: ignore[arg-type]


def metric_columns(rows: Sequence[ComparisonRow], attribute_index: Mapping[str, int]) -> MetricColumns:
    """The MetricColumns of `rows`; `attribute_index` maps each row's attribute id to its position."""
    n = len(rows)

    def column(values: Iterable[Any], dtype: Any) -> np.ndarray:
        return np.fromiter(values, dtype=dtype, count=n)

    return MetricColumns(
        attribute=column((attribute_index[row.attribute_id] for row in rows), np.int32),
        valid=column((row.gold_is_valid for row in rows), bool),
        gold_present=column((row.human_extraction is not None for row in rows), bool),
        predicted=column((row.llm_extraction is not None for row in rows), bool),
        gold_number=column((_number(row.human_extraction) for row in rows), np.float64),
        predicted_number=column((_number(row.llm_extraction) for row in rows), np.float64),
        in_context=column((_TRISTATE[row.gold_value_in_context] for row in rows), np.int8),
        in_citation=column((bool(row.gold_value_in_citation) for row in rows), bool),
        status=column((STATUS_CODES[row.match_status] for row in rows), np.int8),
    )


def _count(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))


def row_counts(
    attribute_type: AttributeType, columns: MetricColumns, rows: np.ndarray
) -> dict[str, np.ndarray]:
    """Each row's contribution (the rows at positions `rows` of `columns`, scored rows of a scored
    type) to the counts the metrics of its type are made of: rows, missing (no prediction), correct;
    BOOL tp, fp, fn (positive = True); STRING edit_match (exact or near); INTEGER and FLOAT abs_error
    (|gold - predicted|, 0 without a prediction). Summed per document, they are the counts the
    intervals resample (`uncertainty.attribute_metrics`)."""
    hit = columns.predicted[rows]
    counts = {"rows": np.ones(rows.size), "missing": ~hit}
    if attribute_type is AttributeType.BOOL:
        # A scored BOOL gold value is True or False, and a prediction True, False or None (NaN).
        gold, guess = columns.gold_number[rows] == 1.0, columns.predicted_number[rows] == 1.0
        counts["correct"] = hit & (gold == guess)
        counts["tp"], counts["fp"], counts["fn"] = (
            hit & gold & guess,
            hit & ~gold & guess,
            hit & gold & ~guess,
        )
        return counts
    # A scored row of a SOURCE_CHECKED_TYPE is an exact match when its prediction is there and correct.
    status = columns.status[rows]
    counts["correct"] = status == _EXACT
    if attribute_type is AttributeType.STRING:
        counts["edit_match"] = counts["correct"] | (status == _NEAR)
    else:
        with np.errstate(invalid="ignore"):  # NaN for a missing prediction, which adds 0
            error = np.abs(columns.gold_number[rows] - columns.predicted_number[rows])
        counts["abs_error"] = np.where(hit, error, 0.0)
    return counts


def score_measures(attribute_type: AttributeType, prefix: str = "") -> dict[str, Ratio]:
    """The score metrics of a set of scored rows as ratios of their summed `row_counts` (count `c` in
    column `<prefix>c`; BOOL's as docs/semantics.md "Counts and ratios"), the others over `rows`. Each
    null when the set holds a missing prediction or its denominator is 0."""
    missing = (f"{prefix}missing",)
    rows = f"{prefix}rows"
    measures = {"accuracy": ratio(f"{prefix}correct", rows, null_if_any=missing)}
    if attribute_type is AttributeType.BOOL:
        tp, fp, fn = f"{prefix}tp", f"{prefix}fp", f"{prefix}fn"
        measures["precision"] = precision(tp, fp, null_if_any=missing)
        measures["recall"] = recall(tp, fn, null_if_any=missing)
        measures["f1_score"] = f1(tp, fp, fn, null_if_any=missing)
    elif attribute_type is AttributeType.STRING:
        measures["edit_distance_match_rate"] = ratio(f"{prefix}edit_match", rows, null_if_any=missing)
    else:
        measures["mean_absolute_error"] = ratio(f"{prefix}abs_error", rows, null_if_any=missing)
    return measures


def _score_set(
    attribute_type: AttributeType, columns: MetricColumns, rows: np.ndarray, custom: dict[str, CustomMetric]
) -> dict[str, float | None]:
    """`score_measures` of the rows selected by the mask `rows`, with mean_absolute_percentage_error =
    mean(abs_error / |gold|) (INTEGER, FLOAT; a mean of ratios, null when any gold value is 0) and the
    custom metrics (BOOL); all null when a prediction is missing."""
    names = _SCORE_NAMES[attribute_type] + tuple(custom)
    selected = np.flatnonzero(rows)
    if not selected.size or not np.all(columns.predicted[selected]):
        return dict.fromkeys(names)
    counts = row_counts(attribute_type, columns, selected)
    # np.sum of the errors, so that abs_error / rows is bit for bit the np.mean it replaced.
    totals = {name: np.array([np.sum(values)], dtype=np.float64) for name, values in counts.items()}
    scores: dict[str, float | None] = {
        name: number_or_none(measure(totals)[0]) for name, measure in score_measures(attribute_type).items()
    }
    if attribute_type in NUMERIC_TYPES:
        gold = columns.gold_number[selected]
        scores["mean_absolute_percentage_error"] = (
            None if np.any(gold == 0) else float(np.mean(counts["abs_error"] / np.abs(gold)))
        )
    elif attribute_type is AttributeType.BOOL:
        y_true, y_pred = columns.gold_number[selected] != 0, columns.predicted_number[selected] != 0
        for name, function in custom.items():
            scores[name] = custom_metric_value(function, y_true, y_pred)
    return scores


def attribute_result(
    spec: AttributeSpec, columns: MetricColumns, custom_metrics: dict[str, CustomMetric]
) -> AttributeResult:
    """Counts and metrics of `spec` over the MetricColumns of its rows (those rows only). Counts:
    n_gold_instances (scored rows), n_good_source_instances / n_good_citation_instances (scored rows
    whose gold value is in the context / citation; SOURCE_CHECKED_TYPES), n_missing_predictions (scored
    rows without a prediction), n_invalid_gold. Metrics: `_score_set` of each set of scored rows."""
    scored = columns.valid & columns.gold_present
    # Each set of rows scored, by the suffix of its metrics' names.
    subsets = {"": scored, GIVEN_PREDICTION: scored & columns.predicted}
    counts = {"n_gold_instances": _count(scored)}
    if spec.type in SOURCE_CHECKED_TYPES:
        # A row without a context (gold_value_in_context None) is in neither stratum.
        subsets[STRATA[0]] = scored & (columns.in_context == 1)
        subsets[STRATA[1]] = scored & (columns.in_context == 0)
        counts["n_good_source_instances"] = _count(subsets[STRATA[0]])
        counts["n_good_citation_instances"] = _count(scored & columns.in_citation)
    counts["n_missing_predictions"] = _count(scored & ~columns.predicted)
    counts["n_invalid_gold"] = _count(~columns.valid)
    if spec.type not in SCORED_TYPES:
        return AttributeResult(spec=spec, counts=counts, metrics={})
    if spec.type is not AttributeType.BOOL:
        custom_metrics = {}
    # The gold True count; `order` keeps it for BOOL only.
    metrics: dict[str, float | None] = {"n_labels": _count(scored & (columns.gold_number == 1))}
    for suffix, subset in subsets.items():
        custom = custom_metrics if suffix in ("", GIVEN_PREDICTION) else {}
        for name, value in _score_set(spec.type, columns, subset, custom).items():
            metrics[name + suffix] = value
    order = metric_column_order([spec.type], custom_metrics)
    return AttributeResult(spec=spec, counts=counts, metrics={name: metrics[name] for name in order})


def metric_column_order(
    attribute_types_present: Iterable[AttributeType], custom_metrics: Collection[str]
) -> list[str]:
    """Metric column names for a metrics table holding these attribute types, in display order: each
    score and its strata, the `_given_prediction` variants, then the custom metrics (BOOL only)."""
    types = set(attribute_types_present)
    applying = [(name, types & applies_to) for name, applies_to in _SCORES if types & applies_to]
    columns: list[str] = []
    for name, present in applying:
        columns.append(name)
        if present & SOURCE_CHECKED_TYPES:
            columns.extend(name + suffix for suffix in STRATA)
        if name == "f1_score":
            columns.append("n_labels")
    columns.extend(name + GIVEN_PREDICTION for name, _ in applying)
    if AttributeType.BOOL in types:
        names = {name.strip() for name in custom_metrics}
        columns.extend(sorted(names | {name + GIVEN_PREDICTION for name in names}))
    return columns
