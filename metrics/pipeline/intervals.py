"""Confidence intervals for a run's results, from what the engines already produced (issue 8).

The glue between the engines' per-document outputs and `metrics.engine.uncertainty`. Plain Python, no
Django: the offline commands, the server's scoring jobs and the benchmarks call the same functions.

Processes: given the run's executor, a run of several processes sums its resamples in them
(`word_sums_of`: one run of consecutive resamples a process, each from where the one generator is at
its start); the intervals are the same to the last bit in one process or several.

Settings (`IntervalSettings`): level 0.95, 2,000 resamples, seed 20260808 by default; 0 resamples turns
intervals off. The settings are recorded with every result (`interval_config`), so the same input and
settings give the same intervals, and anyone can reproduce them.

Spans (results.json): `attach_span_intervals(results, intervals)` puts each interval beside its
metric as `<metric>_ci` (`micro.chars.all.f1_ci`, `leakage.any_char.rate_all_documents_ci`,
`per_type.PERSON_NAME.chars_typed.recall_ci`, `per_type.PERSON_NAME.char_recall_ci`), an interval
object `{"low", "high", "level", "method", "resamples", "seed"}`, or null where the metric is null.
Covered: micro chars.all / chars.scored, nervaluate strict / partial and spans_overlap.type_agnostic
precision, recall and F1 (cluster bootstrap over documents), per-type chars_typed recall and char
recall (bootstrap), and the leakage rates (exact Clopper–Pearson, documents are the trials).
The settings go to `config.intervals`.

Attributes (metrics.json, metrics.csv): `extraction_intervals(evaluation, settings)` gives
`{attribute_id: {metric: Interval}}` for accuracy, precision, recall, f1_score,
edit_distance_match_rate and mean_absolute_error with their `_given_prediction`,
`_given_good_source` and `_given_bad_source` variants; `metrics.artefacts.metrics_files` writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from metrics.engine.attributes.types import AttributeType, ExtractionEvaluation
from metrics.engine.spans import LEAKAGE_CONDITIONS, SpanScores, as_span_scores
from metrics.engine.spans.score import (
    COUNT_FIELDS,
    STORED_FIELDS,
    TYPE_STORED_FIELDS,
    derived_count,
)
from metrics.engine.uncertainty import (
    BOOTSTRAP_METHOD,
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DocumentCounts,
    Interval,
    clopper_pearson,
)
from metrics.engine.uncertainty.attribute_metrics import attribute_document_counts, attribute_intervals
from metrics.engine.uncertainty.measures import columns_read
from metrics.engine.uncertainty.resampling import (
    PackedColumns,
    ResampleRun,
    WordSums,
    resample_run_sums,
    resample_runs,
    tallied_ahead_words,
)
from metrics.engine.uncertainty.span_metrics import (
    span_document_counts,
    span_intervals,
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


def word_sums_of(executor: Executor | None, meanwhile: Callable[[], object] | None = None) -> WordSums:
    """How the resamples are summed: in runs over the executor's processes when it has several, else
    in this process. The sums are the same to the last bit either way. `meanwhile`: work of this
    process to do while the processes sum (see `pooled_word_sums`)."""
    if executor is None or executor.processes < 2:
        return tallied_ahead_words
    if meanwhile is None:
        return partial(pooled_word_sums, executor)
    return partial(pooled_word_sums, executor, meanwhile=meanwhile)


def pooled_word_sums(
    executor: Executor,
    packed: PackedColumns,
    resamples: int,
    seed: int,
    *,
    meanwhile: Callable[[], object] | None = None,
) -> np.ndarray:
    """The packed words' sums of every resample, in one run per process of `executor`, put back in
    order. This process finds where each run starts (`resample_runs`) while the runs before it are
    being summed; every process gets the packed table once, with its run.

    `meanwhile` is called once every run is handed out and before their sums are awaited, when this
    process would only wait; it is not called when the resamples are summed here (too few to pool).
    """
    if packed.words.shape[0] * resamples < _POOLED_FROM:
        return tallied_ahead_words(packed, resamples, seed)
    runs = resample_runs(packed, resamples, seed, parts=executor.processes)
    if meanwhile is not None:
        runs = _then(runs, meanwhile)
    return np.concatenate(list(executor.map(resample_run_sums, runs)))


def _then(runs: Iterator[ResampleRun], meanwhile: Callable[[], object]) -> Iterator[ResampleRun]:
    """The runs, then `meanwhile()` when the executor asks for a run after the last: a pool hands out
    what it is given before it waits for a result, so the call falls while every run is summed."""
    yield from runs
    meanwhile()


def _load_exact_quantiles() -> None:
    """One throwaway exact interval: its first call loads scipy's beta quantile (0.15 s of CPU), which
    the leakage intervals then find loaded."""
    clopper_pearson(1, 2)


def interval_dict(interval: Interval) -> dict[str, Any] | None:
    """The stored shape of an interval; None when it is undefined (its metric is null)."""
    if interval.low is None or interval.high is None:
        return None
    return interval.as_dict()


# Spans ------------------------------------------------------------------------------------------


def span_count_table(scores: SpanScores) -> DocumentCounts:
    """The per-document counts the span intervals read, as DocumentCounts.

    The same columns as the span engine's `document_count_table` (overall counts, `chars_typed.<TYPE>.
    {tp,fp,fn}`, `leakage.<condition>.leaked`) plus `chars_typed.<TYPE>.covered_by_any` (the numerator
    of per-type `char_recall`), restricted to the columns some interval reads, gathered from the
    scores' count columns one float column at a time.
    """
    table_of_scores = as_span_scores(scores)
    n_documents = len(table_of_scores)
    # Documents in id order (DocumentCounts' order), so the columns are built sorted, never copied.
    document_ids = np.array(table_of_scores.document_ids, dtype=object)
    order = np.argsort(document_ids, kind="stable")
    position = np.empty(n_documents, dtype=np.int64)
    position[order] = np.arange(n_documents)
    row_type = table_of_scores.row_type
    present = np.flatnonzero(np.bincount(row_type, minlength=len(table_of_scores.type_names)))
    type_names = [table_of_scores.type_names[code] for code in present.tolist()]

    type_columns = [f"chars_typed.{t}.{name}" for t in type_names for name in _TYPE_COLUMNS]
    leaked_columns = [f"leakage.{condition}.leaked" for condition in LEAKAGE_CONDITIONS]
    needed = set(_SPAN_COUNTS_ALWAYS)
    for definition in span_metric_definitions([*COUNT_FIELDS, *type_columns, *leaked_columns]).values():
        needed |= columns_read(definition.measure) or set()
        needed |= set(definition.correctness or ())

    stored = _StoredColumns(table_of_scores.counts, order)
    makers: dict[str, Callable[[], np.ndarray]] = {}
    for name in COUNT_FIELDS:
        if name in needed:
            makers[name] = (
                partial(stored, name) if name in STORED_FIELDS else partial(derived_count, name, stored)
            )
    for condition in LEAKAGE_CONDITIONS:
        if f"leakage.{condition}.leaked" in needed:
            makers[f"leakage.{condition}.leaked"] = partial(
                stored.positive, f"leakage.{condition}.gold_spans_affected"
            )
    rows_by_type = _RowsByType(table_of_scores, position)
    fillers: dict[str, Callable[[np.ndarray], None]] = {}
    for entity_type in type_names:
        code = table_of_scores.type_names.index(entity_type)
        for name in _TYPE_COLUMNS:
            if f"chars_typed.{entity_type}.{name}" in needed:
                fillers[f"chars_typed.{entity_type}.{name}"] = partial(rows_by_type.fill, code, name)
    # One matrix, a column per count: freed at once when the resampling lets go of its last column,
    # where columns of their own would leave the allocator a heap of holes the size of the table.
    matrix = np.zeros((n_documents, len(makers) + len(fillers)), dtype=np.float64, order="F")
    table: dict[str, np.ndarray] = {}
    for k, (name, make) in enumerate(makers.items()):
        matrix[:, k] = make()
        table[name] = matrix[:, k]
    for k, (name, fill) in enumerate(fillers.items(), len(makers)):
        fill(matrix[:, k])  # a type's column is mostly zeros: only its documents' entries are written
        table[name] = matrix[:, k]
    del matrix
    table["document_id"] = document_ids[order]
    return span_document_counts(table)


class _RowsByType:
    """The rows of one type at a time: the table's columns are made type after type, so each type's
    rows are found once for its columns, not once a column (a scan of every row each), and only one
    type's are held: the table is built at the process's peak of memory (bench/spans/README.md)."""

    def __init__(self, scores: SpanScores, position: np.ndarray) -> None:
        self.scores, self.position = scores, position
        self.code, self.rows, self.at = -1, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)

    def fill(self, code: int, name: str, column: np.ndarray) -> None:
        """Write `chars_typed.<TYPE>.<name>` into the zeros of `column` (one entry a document), from
        the rows of the type `code`, each document at its `position`."""
        if code != self.code:
            # The type's rows and their documents' positions, gathered once for all its columns.
            self.code, self.rows = code, np.flatnonzero(self.scores.row_type == code)
            self.at = self.position[self.scores.row_document[self.rows]]
        column[self.at] = self.scores.rows[self.rows, TYPE_STORED_FIELDS.index(f"chars_typed.{name}")]


class _StoredColumns:
    """A STORED_FIELDS column of every document, as floats, in the order `order`."""

    def __init__(self, counts: np.ndarray, order: np.ndarray) -> None:
        # Documents scored in id order (as most are) need no gather, only a cast.
        in_order = bool(np.array_equal(order, np.arange(len(order))))
        self.counts, self.order = counts, (slice(None) if in_order else order)

    def __call__(self, name: str) -> np.ndarray:
        return self.counts[self.order, STORED_FIELDS.index(name)].astype(np.float64)

    def positive(self, name: str) -> np.ndarray:
        """1.0 where the column is above zero."""
        return (self(name) > 0).astype(np.float64)


def span_results_intervals(
    scores: SpanScores, settings: IntervalSettings = DEFAULT_INTERVALS
) -> dict[str, Interval]:
    """`{results.json path: Interval}` for the scored documents (empty when intervals are off)."""
    if not settings.enabled or not len(scores):
        return {}
    return span_table_intervals(span_count_table(scores), settings)


def span_table_intervals(
    table: DocumentCounts, settings: IntervalSettings = DEFAULT_INTERVALS, executor: Executor | None = None
) -> dict[str, Interval]:
    """`span_results_intervals` from the scores' `span_count_table`, which it empties: the resampling
    lets go of each column once it has read it. `executor`: the run's, to sum resamples in its
    processes."""
    if not settings.enabled or not table.n_documents:
        return {}
    return span_intervals(
        table,
        level=settings.level,
        resamples=settings.resamples,
        seed=settings.seed,
        consume=True,
        word_sums=word_sums_of(executor, _load_exact_quantiles),
    )


def attach_span_intervals(results: dict[str, Any], intervals: Mapping[str, Interval]) -> None:
    """Put each interval beside its metric: `micro.chars.all.f1` gets `micro.chars.all.f1_ci`.

    A path whose parent is not in the results (a type the body does not list) is skipped.
    """
    for path, interval in intervals.items():
        *parents, leaf = path.split(".")
        node: Any = results
        for key in parents:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[leaf + CI_SUFFIX] = interval_dict(interval)


# Attributes -------------------------------------------------------------------------------------


def extraction_intervals(
    evaluation: ExtractionEvaluation,
    settings: IntervalSettings = DEFAULT_INTERVALS,
    *,
    document_ids: Iterable[str] = (),
) -> dict[str, dict[str, Interval]] | None:
    """`{attribute_id: {metric: Interval}}` for every scored attribute; None when intervals are off.

    Documents are the resampled clusters: all rows of a document travel together. `document_ids`
    adds documents without rows (they are still drawn).
    """
    if not settings.enabled:
        return None
    types = {result.spec.attribute_id: result.spec.type for result in evaluation.attributes}
    return extraction_intervals_from_counts(
        attribute_document_counts(evaluation.rows, document_ids), types, settings
    )


def extraction_intervals_from_counts(
    counts: DocumentCounts,
    attribute_types: Mapping[str, AttributeType],
    settings: IntervalSettings = DEFAULT_INTERVALS,
    executor: Executor | None = None,
) -> dict[str, dict[str, Interval]] | None:
    """`extraction_intervals` from the rows' per-document counts (`attribute_document_counts`, or
    counts of parts of the run joined with `DocumentCounts.joined`), for the scored attributes of
    `attribute_types` ({attribute_id: type}, in schema order). `executor`: the run's, to sum
    resamples in its processes."""
    if not settings.enabled:
        return None
    return attribute_intervals(
        counts,
        attribute_types,
        level=settings.level,
        resamples=settings.resamples,
        seed=settings.seed,
        word_sums=word_sums_of(executor),
    )


def intervals_from_metrics_report(report: Mapping[str, Any]) -> dict[str, dict[str, Interval]] | None:
    """The intervals a metrics.json body holds, back as `{attribute_id: {metric: Interval}}` (to write
    metrics.csv from a stored report without resampling again); None when it holds none."""
    if "intervals_config" not in report and not any("intervals" in entry for entry in report["attributes"]):
        return None
    return {
        str(entry["attribute_id"]): {
            metric: Interval(
                low=stored["low"],
                high=stored["high"],
                level=stored["level"],
                method=stored["method"],
                resamples=stored.get("resamples"),
                seed=stored.get("seed"),
            )
            for metric, stored in (entry.get("intervals") or {}).items()
        }
        for entry in report["attributes"]
    }


__all__ = [
    "CI_SUFFIX",
    "DEFAULT_INTERVALS",
    "IntervalSettings",
    "attach_span_intervals",
    "extraction_intervals",
    "interval_dict",
    "interval_settings_problems",
    "intervals_from_metrics_report",
    "span_count_table",
    "span_results_intervals",
    "span_table_intervals",
    "word_sums_of",
]
