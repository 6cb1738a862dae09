"""The attribute (extraction) task's chunk, partial result and merge.

A chunk is a contiguous slice of the run's gold documents (those with gold, in gold order) with the
predictions of those documents; its partial result holds the chunk's comparison rows as columns
(one tuple of values per ComparisonRow field), its warnings, and its counts of predicted values
outside the schema. `merge_attribute_partials` is the one place where chunks meet: rows and
warnings in chunk order, the outside-the-schema counts added before they are worded, so the result
is that of one pass whatever the chunking.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from typing import Any

from metrics.engine.attributes.comparison import (
    add_unknown_counts,
    check_schema,
    compare_document_slice,
    documents_to_compare,
    unknown_attribute_warnings,
    unscored_document_ids,
    validate_settings,
)
from metrics.engine.attributes.types import (
    AttributeSpec,
    ComparisonRow,
    EvaluationSettings,
    GoldDocument,
    PredictionDocument,
)
from metrics.pipeline.executors import Executor

# Documents per chunk when chunks go to other processes: enough that a chunk's fixed costs (its
# caches, the fuzzy scores' helper thread) are spread over ~25,000 rows, few enough that several
# chunks are in flight per process.
CHUNK_DOCUMENTS = 2_500

_ROW_FIELDS = tuple(field.name for field in dataclasses.fields(ComparisonRow))
_row_values = attrgetter(*_ROW_FIELDS)


@dataclass
class AttributeChunk:
    run_id: str
    attributes: Sequence[AttributeSpec]
    settings: EvaluationSettings
    gold_documents: Sequence[GoldDocument]
    predictions: Mapping[str, PredictionDocument]  # of this chunk's documents (others are ignored)


@dataclass
class AttributePartial:
    """One chunk's comparison rows, warnings, and counts of predicted values per attribute id outside
    the schema. Pickled (to cross to another process) with its rows as columns, one tuple of values
    per ComparisonRow field, and equal texts sent once."""

    rows: list[ComparisonRow]
    warnings: list[str]
    unknown_predicted: dict[str, int]
    # The chunk's gold documents without gold for any schema attribute (listed, not scored).
    unscored_documents: list[str] = field(default_factory=list)

    def __getstate__(self) -> tuple[list[tuple[Any, ...]], list[str], dict[str, int], list[str]]:
        strings: dict[Any, Any] = {}
        keep = strings.setdefault
        columns = [
            tuple(keep(value, value) if value.__class__ is str else value for value in column)
            for column in zip(*map(_row_values, self.rows), strict=True)
        ]
        return columns, self.warnings, self.unknown_predicted, self.unscored_documents

    def __setstate__(self, state: tuple[list[tuple[Any, ...]], list[str], dict[str, int], list[str]]) -> None:
        columns, self.warnings, self.unknown_predicted, self.unscored_documents = state
        self.rows = list(map(ComparisonRow, *columns)) if columns else []


def compare_attribute_chunk(chunk: AttributeChunk) -> AttributePartial:
    rows, warnings, unknown = compare_document_slice(
        run_id=chunk.run_id,
        attributes=chunk.attributes,
        gold_documents=chunk.gold_documents,
        predictions=chunk.predictions,
        settings=chunk.settings,
    )
    unscored = unscored_document_ids(chunk.gold_documents, chunk.attributes)
    return AttributePartial(rows, warnings, unknown, unscored)


@dataclass
class MergedAttributes:
    """The chunks of a run joined: what `evaluation_from_rows` builds the run's evaluation from."""

    rows: list[ComparisonRow]
    warnings: list[str]
    unscored_documents: list[str]


def merge_attribute_partials(partials: Iterable[AttributePartial]) -> MergedAttributes:
    """Every chunk's rows, warnings and unscored documents, in chunk order; the warnings end with the
    outside-the-schema ones, counted over every chunk."""
    merged = MergedAttributes(rows=[], warnings=[], unscored_documents=[])
    unknown: dict[str, int] = {}
    for chunk_result in partials:
        merged.rows.extend(chunk_result.rows)
        merged.warnings.extend(chunk_result.warnings)
        merged.unscored_documents.extend(chunk_result.unscored_documents)
        add_unknown_counts(unknown, chunk_result.unknown_predicted)
    merged.warnings.extend(unknown_attribute_warnings(unknown))
    return merged


def attribute_chunks(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    gold_documents: Sequence[GoldDocument],
    predictions: Mapping[str, PredictionDocument],
    settings: EvaluationSettings,
    size: int,
) -> Iterator[AttributeChunk]:
    """The run's documents with gold, in slices of `size`, each with its documents' predictions."""
    for start in range(0, len(gold_documents), size):
        documents = gold_documents[start : start + size]
        own = {
            document.document_id: predictions[document.document_id]
            for document in documents
            if document.document_id in predictions
        }
        yield AttributeChunk(run_id, attributes, settings, documents, own)


def compare_all_documents(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    gold_documents: Sequence[GoldDocument],
    predictions: Mapping[str, PredictionDocument],
    settings: EvaluationSettings,
    executor: Executor,
    chunk_documents: int | None = None,
) -> tuple[list[ComparisonRow], list[str]]:
    """`compare_documents` of the whole run, chunked and scored by `executor`: the same rows and
    warnings, in the same order, whatever the chunking. `chunk_documents` None: one chunk in
    this process, CHUNK_DOCUMENTS per chunk in others."""
    validate_settings(settings)
    check_schema(attributes)
    documents = documents_to_compare(gold_documents, attributes)
    if chunk_documents is None:
        chunk_documents = CHUNK_DOCUMENTS if executor.processes > 1 else max(len(documents), 1)
    if executor.processes <= 1 and chunk_documents >= len(documents):
        # One chunk here: the predictions as they are (no per-chunk subset to build).
        chunks: Iterable[AttributeChunk] = [
            AttributeChunk(run_id, attributes, settings, documents, predictions)
        ]
    else:
        chunks = attribute_chunks(
            run_id=run_id,
            attributes=attributes,
            gold_documents=documents,
            predictions=predictions,
            settings=settings,
            size=chunk_documents,
        )
    merged = merge_attribute_partials(executor.map(compare_attribute_chunk, chunks))
    return merged.rows, merged.warnings


def chunked_comparison(executor: Executor) -> Callable[..., tuple[list[ComparisonRow], list[str]]]:
    """`compare_all_documents` with this executor, for `evaluate_extraction(compare=...)`."""
    return partial(compare_all_documents, executor=executor)
