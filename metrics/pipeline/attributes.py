"""The attribute task's chunk (a slice of the gold documents, with their predictions), partial
result and merge: the one chunked comparison, of the server, the offline route and the paired report.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from metrics.engine.attributes.comparison import compare_document_slice, unknown_attribute_warnings
from metrics.engine.attributes.types import (
    AttributeSpec,
    ComparisonRow,
    EvaluationSettings,
    GoldDocument,
    PredictionDocument,
)

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
    return AttributePartial(
        *compare_document_slice(
            run_id=chunk.run_id,
            attributes=chunk.attributes,
            gold_documents=chunk.gold_documents,
            predictions=chunk.predictions,
            settings=chunk.settings,
        )
    )


def merge_attribute_partials(partials: Iterable[AttributePartial]) -> AttributePartial:
    """The run's result: every chunk's rows, warnings and unscored documents, in chunk order; the
    warnings end with the outside-the-schema ones, counted over every chunk (no count is left)."""
    merged = AttributePartial(rows=[], warnings=[], unknown_predicted={})
    unknown: Counter[str] = Counter()
    for chunk_result in partials:
        merged.rows.extend(chunk_result.rows)
        merged.warnings.extend(chunk_result.warnings)
        merged.unscored_documents.extend(chunk_result.unscored_documents)
        unknown.update(chunk_result.unknown_predicted)
    merged.warnings.extend(unknown_attribute_warnings(unknown))
    return merged
