"""Per-attribute counts and metrics, computed from comparison rows (SEMANTICS.md section 2).

Which rows enter: a row is *scored* when its gold value is valid and not null. Invalid gold is only
counted (`n_invalid_gold`); a null gold (an attribute whose missing default is null) is left out.

The missing-prediction rule: a set of scored rows with any missing prediction gets no score metrics
(null), because scoring only the predicted rows would flatter a pipeline that fails often. The same
metrics on the predicted subset are always reported too, suffixed `_given_prediction`, with
`n_missing_predictions`, so a blank is never all a user learns. Strata (`_given_good_source`,
`_given_bad_source`) follow the same rule; they get no `_given_prediction` variant.

Metrics are vectorised with numpy; tests hold them against scikit-learn.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np

from metrics.engine.attributes.comparison import SOURCE_CHECKED_TYPES
from metrics.engine.attributes.custom_metrics import CustomMetric, custom_metric_value, resolve_custom_metrics
from metrics.engine.attributes.types import (
    AttributeResult,
    AttributeSpec,
    AttributeType,
    ComparisonRow,
    EvaluationSettings,
    MatchStatus,
)

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

_BOOL_SCORES = ("accuracy", "precision", "recall", "f1_score")
_STRING_SCORES = ("accuracy", "edit_distance_match_rate")
_NUMERIC_SCORES = ("accuracy", "mean_absolute_error", "mean_absolute_percentage_error")
_SCORE_NAMES: dict[AttributeType, tuple[str, ...]] = {
    AttributeType.BOOL: _BOOL_SCORES,
    AttributeType.STRING: _STRING_SCORES,
    AttributeType.INTEGER: _NUMERIC_SCORES,
    AttributeType.FLOAT: _NUMERIC_SCORES,
}
_NEAR_OR_EXACT = (MatchStatus.EXACT_MATCH, MatchStatus.NEAR_MATCH)


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def bool_scores(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float | None]:
    """Binary scores with positive = True, each null when its denominator is 0.

    accuracy = (tp + tn) / n; precision = tp / (tp + fp); recall = tp / (tp + fn);
    f1_score = 2tp / (2tp + fp + fn) (so 0, not null, when there are errors but no true positive).
    """
    tp = int(np.count_nonzero(y_true & y_pred))
    fp = int(np.count_nonzero(~y_true & y_pred))
    fn = int(np.count_nonzero(y_true & ~y_pred))
    n = len(y_true)
    return {
        "accuracy": _ratio(n - fp - fn, n),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "f1_score": _ratio(2 * tp, 2 * tp + fp + fn),
    }


def string_scores(statuses: Sequence[MatchStatus | None]) -> dict[str, float | None]:
    """accuracy = share of exact_match rows; edit_distance_match_rate = share of exact or near_match
    rows (normalised Levenshtein similarity >= threshold; exact implies similarity 1). Null when empty."""
    n = len(statuses)
    exact = sum(1 for status in statuses if status is MatchStatus.EXACT_MATCH)
    near_or_exact = sum(1 for status in statuses if status in _NEAR_OR_EXACT)
    return {"accuracy": _ratio(exact, n), "edit_distance_match_rate": _ratio(near_or_exact, n)}


def numeric_scores(gold: np.ndarray, predicted: np.ndarray, correct: np.ndarray) -> dict[str, float | None]:
    """accuracy = share of correct rows (FLOAT: equal within the relative tolerance);
    mean_absolute_error = mean |gold - predicted|; mean_absolute_percentage_error =
    mean(|gold - predicted| / |gold|) as a fraction, null when any gold value is 0. Null when empty."""
    if len(gold) == 0:
        return dict.fromkeys(_NUMERIC_SCORES)
    errors = np.abs(gold - predicted)
    return {
        "accuracy": float(np.mean(correct)),
        "mean_absolute_error": float(np.mean(errors)),
        "mean_absolute_percentage_error": None
        if np.any(gold == 0)
        else float(np.mean(errors / np.abs(gold))),
    }


def _score_set(
    attribute_type: AttributeType, rows: Sequence[ComparisonRow], custom: dict[str, CustomMetric]
) -> dict[str, float | None]:
    """Score metrics of one set of scored rows: all null when the set is empty or any prediction is missing."""
    names = _SCORE_NAMES[attribute_type] + tuple(custom)
    if not rows or any(row.llm_extraction is None for row in rows):
        return dict.fromkeys(names)
    if attribute_type is AttributeType.STRING:
        return string_scores([row.match_status for row in rows])
    if attribute_type in NUMERIC_TYPES:
        gold = np.fromiter((row.human_extraction for row in rows), dtype=float, count=len(rows))
        predicted = np.fromiter((row.llm_extraction for row in rows), dtype=float, count=len(rows))
        correct = np.fromiter((bool(row.is_correct) for row in rows), dtype=bool, count=len(rows))
        return numeric_scores(gold, predicted, correct)
    y_true = np.fromiter((row.human_extraction for row in rows), dtype=bool, count=len(rows))
    y_pred = np.fromiter((row.llm_extraction for row in rows), dtype=bool, count=len(rows))
    scores = bool_scores(y_true, y_pred)
    for name, function in custom.items():
        scores[name] = custom_metric_value(function, y_true, y_pred)
    return scores


def is_scored_row(row: ComparisonRow) -> bool:
    """Valid, non-null gold: the rows that enter counts and metrics."""
    return row.gold_is_valid and row.human_extraction is not None


def attribute_result(
    spec: AttributeSpec,
    rows: Sequence[ComparisonRow],
    settings: EvaluationSettings,
    *,
    custom_metrics: dict[str, CustomMetric] | None = None,
) -> AttributeResult:
    """Counts and metrics of `spec` over its rows (rows of other attributes are ignored).

    Counts: n_gold_instances (scored rows), n_good_source_instances / n_good_citation_instances
    (scored rows whose gold value is in the context / citation; STRING, INTEGER, FLOAT only),
    n_missing_predictions (scored rows without a prediction), n_invalid_gold.
    Metrics by type (LIST and DICT have none): see `bool_scores`, `string_scores`, `numeric_scores`;
    BOOL adds n_labels (gold True count) and the custom metrics; STRING / INTEGER / FLOAT add the two
    source strata. Every score also comes `_given_prediction`. `custom_metrics` lets a caller resolve
    the settings' names once per evaluation; otherwise they are resolved here.
    """
    own_rows = [row for row in rows if row.attribute_id == spec.attribute_id]
    scored = [row for row in own_rows if is_scored_row(row)]
    source_checked = spec.type in SOURCE_CHECKED_TYPES
    counts = {"n_gold_instances": len(scored)}
    if source_checked:
        counts["n_good_source_instances"] = sum(1 for row in scored if row.gold_value_in_context)
        counts["n_good_citation_instances"] = sum(1 for row in scored if row.gold_value_in_citation)
    counts["n_missing_predictions"] = sum(1 for row in scored if row.llm_extraction is None)
    counts["n_invalid_gold"] = sum(1 for row in own_rows if not row.gold_is_valid)

    metrics: dict[str, float | None] = {}
    if spec.type not in SCORED_TYPES:
        return AttributeResult(spec=spec, counts=counts, metrics=metrics)
    if spec.type is AttributeType.BOOL:
        if custom_metrics is None:
            custom_metrics = resolve_custom_metrics(settings.custom_metrics)
    else:
        custom_metrics = {}

    metrics.update(_score_set(spec.type, scored, custom_metrics))
    if source_checked:
        # A row without a context (gold_value_in_context None) is in neither stratum.
        good = [row for row in scored if row.gold_value_in_context is True]
        bad = [row for row in scored if row.gold_value_in_context is False]
        for suffix, stratum in zip(STRATA, (good, bad), strict=True):
            for name, value in _score_set(spec.type, stratum, {}).items():
                metrics[name + suffix] = value
    if spec.type is AttributeType.BOOL:
        metrics["n_labels"] = sum(1 for row in scored if row.human_extraction is True)
    predicted = [row for row in scored if row.llm_extraction is not None]
    for name, value in _score_set(spec.type, predicted, custom_metrics).items():
        metrics[name + GIVEN_PREDICTION] = value
    order = metric_column_order([spec.type], custom_metrics)
    return AttributeResult(spec=spec, counts=counts, metrics={name: metrics[name] for name in order})


def metric_column_order(
    attribute_types_present: Iterable[AttributeType], custom_metrics: Collection[str]
) -> list[str]:
    """Metric column names for a metrics table holding these attribute types, in display order.

    accuracy (+ strata), precision, recall, f1_score, n_labels, edit_distance_match_rate (+ strata),
    mean_absolute_error (+ strata), mean_absolute_percentage_error (+ strata), the `_given_prediction`
    variants in the same order, then custom metrics and their `_given_prediction` variants sorted
    alphabetically. Custom metrics apply to BOOL attributes only, so they appear only with BOOL.
    """
    types = set(attribute_types_present)
    has_bool = AttributeType.BOOL in types
    has_string = AttributeType.STRING in types
    has_numeric = bool(types & NUMERIC_TYPES)
    has_source = bool(types & SOURCE_CHECKED_TYPES)

    def with_strata(name: str, stratified: bool) -> list[str]:
        return [name, *(name + suffix for suffix in STRATA)] if stratified else [name]

    scores: list[tuple[str, bool, bool]] = [  # (name, applies, stratified)
        ("accuracy", bool(types & SCORED_TYPES), has_source),
        ("precision", has_bool, False),
        ("recall", has_bool, False),
        ("f1_score", has_bool, False),
        ("edit_distance_match_rate", has_string, True),
        ("mean_absolute_error", has_numeric, True),
        ("mean_absolute_percentage_error", has_numeric, True),
    ]
    columns: list[str] = []
    for name, applies, stratified in scores:
        if applies:
            columns.extend(with_strata(name, stratified))
        if name == "f1_score" and has_bool:
            columns.append("n_labels")
    columns.extend(name + GIVEN_PREDICTION for name, applies, _ in scores if applies)
    if has_bool:
        names = {name.strip() for name in custom_metrics}
        columns.extend(sorted(names | {name + GIVEN_PREDICTION for name in names}))
    return columns
