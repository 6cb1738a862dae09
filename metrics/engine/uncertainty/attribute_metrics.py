"""The attribute metrics of issue 8: per-document counts from comparison rows, metric definitions over
them, and one-call intervals in the shape of metrics.json.

Count columns are named `<attribute_id>.<stratum>.<count>`:
    strata: all, given_prediction (the prediction is present), given_good_source / given_bad_source
            (the gold value was / was not in the context the model read; STRING, INTEGER, FLOAT)
    counts: rows (scored rows: valid, non-null gold), missing (rows without a prediction), correct,
            tp, fp, fn (BOOL, positive = True), edit_match (STRING exact or near match), abs_error
            (INTEGER, FLOAT: sum of |gold - predicted|)

Metrics match `attributes.metrics` for each attribute and stratum (names suffixed `_given_prediction`,
`_given_good_source`, `_given_bad_source`): accuracy = correct / rows; BOOL precision = tp / (tp + fp),
recall = tp / (tp + fn), f1_score = 2tp / (2tp + fp + fn); STRING edit_distance_match_rate =
edit_match / rows; INTEGER and FLOAT mean_absolute_error = abs_error / rows. By the seed's rule a set
holding a missing prediction gives null (`_given_prediction` never does), and so does its interval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import TypeVar

import numpy as np

from ..attributes.comparison import SOURCE_CHECKED_TYPES
from ..attributes.metrics import SCORED_TYPES
from ..attributes.types import AttributeType, ComparisonRow, MatchStatus
from .bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, cluster_bootstrap_intervals
from .counts import DocumentCounts
from .measures import MetricDefinition, Ratio, f1, precision, ratio, recall
from .resampling import WordSums, resampled_words

STRATA = ("all", "given_prediction", "given_good_source", "given_bad_source")
_EDIT_MATCHES = (MatchStatus.EXACT_MATCH, MatchStatus.NEAR_MATCH)

Value = TypeVar("Value")


def _attribute_counts(attribute_type: AttributeType, rows: list[ComparisonRow]) -> dict[str, np.ndarray]:
    """Each scored row's contribution to the counts its type has, by the rules of `attributes.metrics`."""
    n = len(rows)
    predicted = list(map(_llm_extraction, rows))
    hit = np.fromiter([value is not None for value in predicted], dtype=bool, count=n)
    counts = {"rows": np.ones(n), "missing": ~hit}
    if attribute_type is AttributeType.BOOL:
        gold = np.fromiter([value is True for value in map(_human_extraction, rows)], dtype=bool, count=n)
        guess = np.fromiter([value is True for value in predicted], dtype=bool, count=n)
        counts["correct"] = hit & (gold == guess)
        counts["tp"], counts["fp"], counts["fn"] = (
            hit & gold & guess,
            hit & ~gold & guess,
            hit & gold & ~guess,
        )
    elif attribute_type is AttributeType.STRING:
        statuses = list(map(_match_status, rows))
        exact = MatchStatus.EXACT_MATCH
        counts["correct"] = np.fromiter([status is exact for status in statuses], dtype=bool, count=n)
        counts["edit_match"] = np.fromiter(
            [status in _EDIT_MATCHES for status in statuses], dtype=bool, count=n
        )
    else:
        counts["correct"] = hit & np.fromiter(map(bool, map(_is_correct, rows)), dtype=bool, count=n)
        counts["abs_error"] = np.array(
            [
                0.0 if guess is None else abs(float(gold) - float(guess))
                for gold, guess in zip(map(_human_extraction, rows), predicted, strict=True)
            ]
        )
    return counts


_llm_extraction = attrgetter("llm_extraction")
_human_extraction = attrgetter("human_extraction")
_match_status = attrgetter("match_status")
_is_correct = attrgetter("is_correct")
_document_id = attrgetter("document_id")
_in_context = attrgetter("gold_value_in_context")


def attribute_document_counts(
    rows: Iterable[ComparisonRow], document_ids: Iterable[str] = ()
) -> DocumentCounts:
    """Per-document count columns from comparison rows (names in the module docstring).

    Rows that are not scored (invalid or null gold) and LIST / DICT rows add nothing. `document_ids` adds
    documents with no row, so they are still drawn in resamples. Vectorised per attribute: one pass to
    group the rows, then arrays and a weighted bincount per column.
    """
    rows = list(rows)
    ids = sorted({str(document_id) for document_id in document_ids}.union(map(_document_id, rows)))
    position = {document_id: i for i, document_id in enumerate(ids)}
    by_attribute: dict[str, list[ComparisonRow]] = {}
    scored_types = SCORED_TYPES
    for row in rows:
        # The rows that enter counts and metrics: valid, non-null gold of a scored type.
        if row.gold_is_valid and row.human_extraction is not None and row.attribute_type in scored_types:
            scored = by_attribute.get(row.attribute_id)
            if scored is None:
                scored = by_attribute[row.attribute_id] = []
            scored.append(row)
    # Per attribute: the document of each scored row, the count columns and the strata.
    parts = []
    n_columns = 0
    for attribute_id, scored in by_attribute.items():
        attribute_type = scored[0].attribute_type
        documents = np.fromiter(
            map(position.__getitem__, map(_document_id, scored)), dtype=np.intp, count=len(scored)
        )
        counts = _attribute_counts(attribute_type, scored)
        strata = {"all": np.ones(len(scored), dtype=bool), "given_prediction": ~counts["missing"]}
        if attribute_type in SOURCE_CHECKED_TYPES:
            in_context = [*map(_in_context, scored)]
            # A row without a context (None) is in neither stratum.
            strata["given_good_source"] = np.fromiter(
                (found is True for found in in_context), dtype=bool, count=len(scored)
            )
            strata["given_bad_source"] = np.fromiter(
                (found is False for found in in_context), dtype=bool, count=len(scored)
            )
        parts.append((attribute_id, documents, counts, strata))
        n_columns += len(strata) * len(counts)
    # The columns are rows of one table: DocumentCounts keeps copies of them, and the table is then
    # freed in one piece. (Hundreds of separate columns left as many holes in the heap, which the
    # bootstrap's large arrays could not reuse: up to 16 MB more at the peak, depending on the run.)
    table = np.empty((n_columns, len(ids)), dtype=np.float64)
    columns: dict[str, np.ndarray] = {}
    for attribute_id, documents, counts, strata in parts:
        for stratum, selected in strata.items():
            for count, values in counts.items():
                column = table[len(columns)]
                column[:] = np.bincount(
                    documents[selected], np.asarray(values, dtype=np.float64)[selected], minlength=len(ids)
                )
                columns[f"{attribute_id}.{stratum}.{count}"] = column
    return DocumentCounts(ids, columns)


def _stratum_measures(attribute_type: AttributeType, prefix: str) -> dict[str, Ratio]:
    missing = (f"{prefix}.missing",)
    rows = f"{prefix}.rows"
    measures = {"accuracy": ratio(f"{prefix}.correct", rows, null_if_any=missing)}
    if attribute_type is AttributeType.BOOL:
        tp, fp, fn = f"{prefix}.tp", f"{prefix}.fp", f"{prefix}.fn"
        measures["precision"] = precision(tp, fp, null_if_any=missing)
        measures["recall"] = recall(tp, fn, null_if_any=missing)
        measures["f1_score"] = f1(tp, fp, fn, null_if_any=missing)
    elif attribute_type is AttributeType.STRING:
        measures["edit_distance_match_rate"] = ratio(f"{prefix}.edit_match", rows, null_if_any=missing)
    else:
        measures["mean_absolute_error"] = ratio(f"{prefix}.abs_error", rows, null_if_any=missing)
    return measures


def attribute_metric_definitions(
    attribute_types: Mapping[str, AttributeType],
) -> dict[tuple[str, str], MetricDefinition]:
    """Every attribute metric with an interval or a paired test, keyed by (attribute_id, metric name).

    LIST and DICT attributes have no metrics. Each metric name is one Holm family across attributes
    (all `accuracy` together, all `mean_absolute_error_given_prediction` together). The plain accuracy
    (one row per document) is compared by McNemar.
    """
    definitions: dict[tuple[str, str], MetricDefinition] = {}
    for attribute_id, attribute_type in attribute_types.items():
        if attribute_type in (AttributeType.LIST, AttributeType.DICT):
            continue
        strata: Sequence[str] = STRATA if attribute_type in SOURCE_CHECKED_TYPES else STRATA[:2]
        for stratum in strata:
            prefix = f"{attribute_id}.{stratum}"
            suffix = "" if stratum == "all" else f"_{stratum}"
            for metric, measure in _stratum_measures(attribute_type, prefix).items():
                name = metric + suffix
                paired_rows = (f"{prefix}.correct", f"{prefix}.rows") if name == "accuracy" else None
                definitions[(attribute_id, name)] = MetricDefinition(
                    measure, family=name, correctness=paired_rows
                )
    return definitions


def attribute_intervals(
    counts: DocumentCounts,
    attribute_types: Mapping[str, AttributeType],
    *,
    level: float = DEFAULT_LEVEL,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    word_sums: WordSums = resampled_words,
) -> dict[str, dict[str, Interval]]:
    """`{attribute_id: {metric name: Interval}}`, the shape of metrics.json's per-attribute `intervals`
    (`word_sums`: who sums the resamples, see `cluster_bootstrap_intervals`)."""
    definitions = attribute_metric_definitions(attribute_types)
    flat = cluster_bootstrap_intervals(
        counts, definitions, level=level, resamples=resamples, seed=seed, word_sums=word_sums
    )
    return {attribute_id: {} for attribute_id in attribute_types} | by_attribute(flat)


def by_attribute(flat: Mapping[tuple[str, str], Value]) -> dict[str, dict[str, Value]]:
    """`{(attribute_id, metric): value}` as `{attribute_id: {metric: value}}` (intervals, or the
    `PairedRuns.metrics` of an attribute comparison, in metrics.json's nesting)."""
    nested: dict[str, dict[str, Value]] = {}
    for (attribute_id, metric), value in flat.items():
        nested.setdefault(attribute_id, {})[metric] = value
    return nested
