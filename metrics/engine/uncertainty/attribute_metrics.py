"""The attribute metrics of issue 8: per-document counts from comparison rows, and definitions over them.

Count columns are `<attribute_id>.<stratum>.<count>`, the `attributes.metrics.row_counts` summed per
document, in strata `all`, `given_prediction`, `given_good_source` / `given_bad_source` (STRING,
INTEGER, FLOAT). The metrics are `attributes.metrics.score_measures` in each stratum, so a stratum
holding a missing prediction has a null interval, as it has a null value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from ..attributes.comparison import SOURCE_CHECKED_TYPES
from ..attributes.metrics import SCORED_TYPES, MetricColumns, metric_columns, row_counts, score_measures
from ..attributes.types import AttributeType, ComparisonRow
from .counts import DocumentCounts
from .measures import MetricDefinition

STRATA = ("all", "given_prediction", "given_good_source", "given_bad_source")

Value = TypeVar("Value")


def attribute_document_counts(
    rows: Iterable[ComparisonRow], document_ids: Iterable[str] = ()
) -> DocumentCounts:
    """Per-document count columns from comparison rows; rows not scored (invalid or null gold, LIST,
    DICT) add nothing. `document_ids` adds documents with no row, so they are still drawn in resamples."""
    rows = list(rows)
    attribute_types = {row.attribute_id: row.attribute_type for row in rows}
    columns = metric_columns(rows, {attribute_id: k for k, attribute_id in enumerate(attribute_types)})
    return counts_of_metric_columns(
        columns, [row.document_id for row in rows], list(attribute_types.items()), document_ids
    )


def counts_of_metric_columns(
    columns: MetricColumns,
    row_document_ids: Sequence[str],
    attributes: Sequence[tuple[str, AttributeType]],
    document_ids: Iterable[str] = (),
) -> DocumentCounts:
    """`attribute_document_counts` of the rows whose MetricColumns these are: row i is of the document
    `row_document_ids[i]` and of the attribute `attributes[columns.attribute[i]]` (id, type)."""
    ids = sorted({str(document_id) for document_id in document_ids}.union(row_document_ids))
    position = {document_id: i for i, document_id in enumerate(ids)}
    documents = np.fromiter(
        map(position.__getitem__, row_document_ids), dtype=np.intp, count=len(row_document_ids)
    )
    scored = columns.valid & columns.gold_present
    parts = []
    n_columns = 0
    for code, (attribute_id, attribute_type) in enumerate(attributes):
        rows = np.flatnonzero(scored & (columns.attribute == code))
        if attribute_type not in SCORED_TYPES or not rows.size:
            continue
        counts = row_counts(attribute_type, columns, rows)
        strata = {"all": np.ones(rows.size, dtype=bool), "given_prediction": ~counts["missing"]}
        if attribute_type in SOURCE_CHECKED_TYPES:
            # A row without a context (-1) is in neither stratum.
            strata["given_good_source"] = columns.in_context[rows] == 1
            strata["given_bad_source"] = columns.in_context[rows] == 0
        parts.append((attribute_id, documents[rows], counts, strata))
        n_columns += len(strata) * len(counts)
    # The columns are rows of one table: DocumentCounts keeps copies of them, and the table is then
    # freed in one piece. (Hundreds of separate columns left as many holes in the heap, which the
    # bootstrap's large arrays could not reuse: up to 16 MB more at the peak, depending on the run.)
    table = np.empty((n_columns, len(ids)), dtype=np.float64)
    count_columns: dict[str, np.ndarray] = {}
    for attribute_id, row_documents, counts, strata in parts:
        for stratum, selected in strata.items():
            for count, values in counts.items():
                column = table[len(count_columns)]
                column[:] = np.bincount(
                    row_documents[selected],
                    np.asarray(values, dtype=np.float64)[selected],
                    minlength=len(ids),
                )
                count_columns[f"{attribute_id}.{stratum}.{count}"] = column
    return DocumentCounts(ids, count_columns)


def attribute_metric_definitions(
    attribute_types: Mapping[str, AttributeType],
) -> dict[tuple[str, str], MetricDefinition]:
    """Every attribute metric with an interval or a paired test, keyed by (attribute_id, metric name);
    the plain accuracy has one row per document, so McNemar's test applies."""
    definitions: dict[tuple[str, str], MetricDefinition] = {}
    for attribute_id, attribute_type in attribute_types.items():
        if attribute_type in (AttributeType.LIST, AttributeType.DICT):
            continue
        strata: Sequence[str] = STRATA if attribute_type in SOURCE_CHECKED_TYPES else STRATA[:2]
        for stratum in strata:
            prefix = f"{attribute_id}.{stratum}"
            suffix = "" if stratum == "all" else f"_{stratum}"
            for metric, measure in score_measures(attribute_type, f"{prefix}.").items():
                name = metric + suffix
                paired_rows = (f"{prefix}.correct", f"{prefix}.rows") if name == "accuracy" else None
                definitions[(attribute_id, name)] = MetricDefinition(
                    measure, family=name, correctness=paired_rows
                )
    return definitions


def by_attribute(flat: Mapping[tuple[str, str], Value]) -> dict[str, dict[str, Value]]:
    """`{(attribute_id, metric): value}` as `{attribute_id: {metric: value}}` (intervals, or the
    `PairedRuns.metrics` of an attribute comparison, in metrics.json's nesting)."""
    nested: dict[str, dict[str, Value]] = {}
    for (attribute_id, metric), value in flat.items():
        nested.setdefault(attribute_id, {})[metric] = value
    return nested
