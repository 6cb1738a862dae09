"""Confidence intervals from the engines' per-document outputs, by `metrics.engine.uncertainty`
(where each lands: docs/uncertainty.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any

import numpy as np

from metrics.engine.attributes.types import AttributeType
from metrics.engine.spans.score import (
    COUNT_FIELDS,
    LEAKAGE_CONDITIONS,
    STORED_FIELDS,
    TYPE_STORED_FIELDS,
    derived_count,
)
from metrics.engine.spans.score_table import SpanScores
from metrics.engine.uncertainty.attribute_metrics import attribute_metric_definitions, by_attribute
from metrics.engine.uncertainty.bootstrap import (
    DEFAULT_INTERVALS,
    Interval,
    IntervalSettings,
    cluster_bootstrap_intervals,
)
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.exact import clopper_pearson
from metrics.engine.uncertainty.measures import columns_read
from metrics.engine.uncertainty.resampling import (
    PackedColumns,
    WordSums,
    resample_run_sums,
    resample_runs,
    resampled_words,
)
from metrics.engine.uncertainty.span_metrics import (
    LEAKAGE_RATE_COLUMNS,
    span_document_counts,
    span_metric_definitions,
)
from metrics.pipeline.executors import Executor

CI_SUFFIX = "_ci"
_TYPE_COLUMNS = ("tp", "fp", "fn", "covered_by_any")
# span_document_counts derives `documents_with_gold` from the documents' gold span counts.
_SPAN_COUNTS_ALWAYS = ("document.gold_spans",)
# Fewer draws (documents x resamples) than this are summed in this process: below it the pool's start
# and the packed table's transfer cost what the split saves, and the table's copies in flight raise
# this process's peak (measured in bench/extraction/README.md and bench/spans/README.md).
_POOLED_FROM = 100_000_000
# Cores one run of resamples keeps busy (a thread tallies, another multiplies: `resample_run_sums`);
# two runs over a pool of two processes contended for them (bench/spans/README.md).
_CORES_PER_RUN = 2


def word_sums_of(executor: Executor | None) -> WordSums:
    """How the resamples are summed: in runs over the executor's processes (`sums_in_pool`), else
    here; the sums are the same to the last bit either way."""
    return partial(pooled_word_sums, executor) if sums_in_pool(executor) else resampled_words


def sums_in_pool(executor: Executor | None) -> bool:
    """Whether the executor's processes make two runs of resamples or more (`_CORES_PER_RUN`): only
    then are large resamplings summed over them."""
    return executor is not None and executor.processes >= 2 * _CORES_PER_RUN


def pooled_word_sums(executor: Executor, packed: PackedColumns, resamples: int, seed: int) -> np.ndarray:
    """The packed words' sums of every resample, in runs over the processes of `executor` (one per
    `_CORES_PER_RUN`), in order; here when the draws or the processes are too few to pool. This
    process finds where each run starts while the runs before it are summed."""
    if packed.words.shape[0] * resamples < _POOLED_FROM or not sums_in_pool(executor):
        return resampled_words(packed, resamples, seed)
    runs = resample_runs(packed, resamples, seed, parts=executor.processes // _CORES_PER_RUN)
    return np.concatenate(list(executor.map(resample_run_sums, runs)))


# Spans ------------------------------------------------------------------------------------------


def span_count_table(scores: SpanScores) -> DocumentCounts:
    """The per-document counts some span interval reads: the test oracle's `document_count_table`
    columns plus `chars_typed.<TYPE>.covered_by_any` (the numerator of per-type `char_recall`)."""
    n_documents = len(scores)
    # Documents in id order (DocumentCounts' order), so the columns are built sorted, never copied.
    document_ids = np.array(scores.document_ids, dtype=object)
    order = np.argsort(document_ids, kind="stable")
    # Documents scored in id order (as most are) need no gather, only a cast.
    gather = slice(None) if np.array_equal(order, np.arange(n_documents)) else order

    def stored(name: str) -> np.ndarray:
        return scores.counts[gather, STORED_FIELDS.index(name)].astype(np.float64)

    present = np.flatnonzero(np.bincount(scores.row_type, minlength=len(scores.type_names))).tolist()
    typed = {
        code: [f"chars_typed.{scores.type_names[code]}.{name}" for name in _TYPE_COLUMNS] for code in present
    }
    leaked = [f"leakage.{condition}.leaked" for condition in LEAKAGE_CONDITIONS]
    definitions = span_metric_definitions(
        [*COUNT_FIELDS, *(name for names in typed.values() for name in names), *leaked]
    )
    needed = set(_SPAN_COUNTS_ALWAYS) | columns_read(definitions.values())
    overall = [name for name in (*COUNT_FIELDS, *leaked) if name in needed]
    wanted = {
        code: [(k, name) for k, name in enumerate(names) if name in needed] for code, names in typed.items()
    }
    # One matrix, a column per count: freed at once when the resampling lets go of its last column,
    # where columns of their own would leave the allocator a heap of holes the size of the table.
    width = len(overall) + sum(map(len, wanted.values()))
    matrix = np.zeros((n_documents, width), dtype=np.float64, order="F")
    columns: dict[str, np.ndarray] = {}
    for name in overall:
        column = columns[name] = matrix[:, len(columns)]
        if name in leaked:
            column[:] = stored(name.replace(".leaked", ".gold_spans_affected")) > 0
        else:
            column[:] = stored(name) if name in STORED_FIELDS else derived_count(name, stored)
    position = np.empty(n_documents, dtype=np.int64)
    position[order] = np.arange(n_documents)
    for code, names in wanted.items():
        # A type's rows are found once for all its columns, and only one type's are held: the table is
        # built at the process's peak of memory (bench/spans/README.md). A type's column is mostly
        # zeros: only its documents' entries are written.
        rows = np.flatnonzero(scores.row_type == code)
        at = position[scores.row_document[rows]]
        for k, name in names:
            column = columns[name] = matrix[:, len(columns)]
            column[at] = scores.rows[rows, TYPE_STORED_FIELDS.index(f"chars_typed.{_TYPE_COLUMNS[k]}")]
    del matrix
    columns["document_id"] = document_ids[order]
    return span_document_counts(columns)


def interval_count_table(scores: SpanScores, settings: IntervalSettings) -> DocumentCounts | None:
    """The `span_count_table` to resample; None when `settings` ask for no intervals or none is scored."""
    return span_count_table(scores) if settings.enabled and len(scores) else None


def span_table_intervals(
    table: DocumentCounts, settings: IntervalSettings = DEFAULT_INTERVALS, executor: Executor | None = None
) -> dict[str, Interval]:
    """`{results.json path: Interval}` from a `span_count_table`, which the resampling empties column
    by column. The leakage rates' intervals are exact (Clopper–Pearson), the others bootstrapped."""
    # Counted before the resampling empties the table.
    trials_of = {
        name: (int(table.column(leaked).sum()), int(table.column(trials).sum()))
        for name, (leaked, trials) in LEAKAGE_RATE_COLUMNS.items()
    }
    definitions = span_metric_definitions(table.columns)
    intervals = cluster_bootstrap_intervals(
        table,
        {name: definition for name, definition in definitions.items() if name not in LEAKAGE_RATE_COLUMNS},
        settings,
        consume=True,
        word_sums=word_sums_of(executor),
    )
    for name, (k, n) in trials_of.items():
        intervals[name] = clopper_pearson(k, n, settings.level)
    return intervals


def attach_span_intervals(results: dict[str, Any], intervals: Mapping[str, Interval]) -> None:
    """Put each interval beside its metric (`micro.chars.all.f1_ci`); a path whose parent the results
    lack (a type the body does not list) is skipped."""
    for path, interval in intervals.items():
        *parents, leaf = path.split(".")
        node = value_at(results, parents)
        if isinstance(node, dict):
            node[leaf + CI_SUFFIX] = interval.stored()


def value_at(data: Any, keys: Iterable[str]) -> Any:
    """The value the keys lead to through nested dicts; None where a step finds no dict."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


# Attributes -------------------------------------------------------------------------------------


def extraction_intervals(
    counts: DocumentCounts,
    attribute_types: Mapping[str, AttributeType],
    settings: IntervalSettings = DEFAULT_INTERVALS,
    executor: Executor | None = None,
) -> dict[str, dict[str, Interval]] | None:
    """`{attribute_id: {metric: Interval}}` from the rows' per-document counts, for the scored
    attributes of `attribute_types` (in schema order); None when intervals are off. Documents are the
    resampled clusters: all rows of a document travel together."""
    if not settings.enabled:
        return None
    flat = cluster_bootstrap_intervals(
        counts,
        attribute_metric_definitions(attribute_types),
        settings,
        word_sums=word_sums_of(executor),
    )
    return {attribute_id: {} for attribute_id in attribute_types} | by_attribute(flat)
