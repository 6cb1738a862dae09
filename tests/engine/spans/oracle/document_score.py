"""The reference scorer's result, one document at a time, and the way between it and the batch's columns.

`document_scores` shows `SpanScores` one document at a time, `span_scores_of` gathers DocumentScores into
columns: the tests compare the two scorers, and aggregate the reference's scores, through them.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from metrics.engine.spans.score import (
    CONDITIONS_OF_LEAK_CODE,
    LEAKAGE_CONDITIONS,
    N_STORED,
    N_TYPE_STORED,
    TYPE_STORED_FIELDS,
    expand_counts,
)
from metrics.engine.spans.score_table import SpanScores
from metrics.engine.spans.types import DocumentSpans
from tests.engine.spans.results import score_span_batches


class LeakedSpan(NamedTuple):
    """A gold span that meets at least one leakage condition, with the conditions it meets (as
    `aggregate` lists it in per_document with include_sensitive_text)."""

    start: int
    end: int
    entity_type: str
    text: str
    conditions: tuple[str, ...]


_CONDITION_CODE = {conditions: code for code, conditions in enumerate(CONDITIONS_OF_LEAK_CODE)}
_TYPE_STORED_INDEX = {name: k for k, name in enumerate(TYPE_STORED_FIELDS)}


@dataclass(frozen=True, slots=True)
class DocumentScore:
    """The counts of one document, independent of every other document.

    `counts` holds STORED_FIELDS, then TYPE_STORED_FIELDS for each type of `types` in turn (32-bit
    integers: a document longer than 2**31 code points fails loudly rather than wrapping). Picklable.
    `leaked_spans` holds the text of leaked gold spans.
    """

    document_id: str
    counts: array
    types: tuple[str, ...] = ()
    leaked_spans: tuple[LeakedSpan, ...] = ()
    dropped_by_type: tuple[tuple[str, int], ...] = ()

    def type_rows(self) -> dict[str, array]:
        """TYPE_STORED_FIELDS of each type."""
        return {
            entity_type: self.counts[N_STORED + k * N_TYPE_STORED : N_STORED + (k + 1) * N_TYPE_STORED]
            for k, entity_type in enumerate(self.types)
        }


def score_document_batch(
    docs: Sequence[DocumentSpans], *, allowed_predicted_types: frozenset[str] | None = None
) -> list[DocumentScore]:
    """The batch scorer's scores of the documents, one DocumentScore each."""
    return document_scores(score_span_batches(docs, allowed_predicted_types=allowed_predicted_types))


def document_scores(scores: SpanScores) -> list[DocumentScore]:
    """Each document's score, as `score_document` gives it."""
    return [_document(scores, index) for index in range(len(scores))]


def _document(scores: SpanScores, index: int) -> DocumentScore:
    rows = slice(*np.searchsorted(scores.row_document, (index, index + 1)).tolist())
    leaked = range(*np.searchsorted(scores.leaked_document, (index, index + 1)).tolist())
    dropped = slice(*np.searchsorted(scores.dropped_document, (index, index + 1)).tolist())
    names = scores.type_names
    counts = array("i", scores.counts[index].tobytes())
    counts.frombytes(scores.rows[rows].tobytes())
    return DocumentScore(
        document_id=scores.document_ids[index],
        counts=counts,
        types=tuple(sys.intern(names[code]) for code in scores.row_type[rows].tolist()),
        leaked_spans=tuple(
            LeakedSpan(
                int(scores.leaked_start[k]),
                int(scores.leaked_end[k]),
                names[scores.leaked_type[k]],
                scores.leaked_text[k],
                CONDITIONS_OF_LEAK_CODE[int(scores.leaked_condition[k])],
            )
            for k in leaked
        ),
        dropped_by_type=tuple(
            (names[code], count)
            for code, count in zip(
                scores.dropped_type[dropped].tolist(), scores.dropped_count[dropped].tolist(), strict=True
            )
        ),
    )


def span_scores_of(scores: Iterable[DocumentScore]) -> SpanScores:
    """The columns of DocumentScores, in their order."""
    scores = list(scores)
    for score in scores:
        if len(score.counts) != N_STORED + len(score.types) * N_TYPE_STORED:
            raise ValueError(f"document {score.document_id!r}: counts do not match STORED_FIELDS")
    if not scores:
        return SpanScores.empty()
    names = sorted(
        {
            *(t for score in scores for t in score.types),
            *(span.entity_type for score in scores for span in score.leaked_spans),
            *(name for score in scores for name, _ in score.dropped_by_type),
        }
    )
    code = {name: k for k, name in enumerate(names)}
    rows = [
        (index, row_type, row)
        for index, score in enumerate(scores)
        for row_type, row in score.type_rows().items()
    ]
    leaked = [(index, span) for index, score in enumerate(scores) for span in score.leaked_spans]
    dropped = [
        (index, name, count) for index, score in enumerate(scores) for name, count in score.dropped_by_type
    ]

    def column(values: Iterable, dtype: type = np.int64) -> np.ndarray:
        return np.array(list(values), dtype=dtype)

    return SpanScores(
        document_ids=[score.document_id for score in scores],
        counts=np.array([score.counts[:N_STORED] for score in scores], dtype=np.int32),
        type_names=tuple(names),
        row_document=column(index for index, _, _ in rows),
        row_type=column(code[name] for _, name, _ in rows),
        rows=np.array([row for _, _, row in rows], dtype=np.int32).reshape(-1, N_TYPE_STORED),
        leaked_document=column(index for index, _ in leaked),
        leaked_start=column(span.start for _, span in leaked),
        leaked_end=column(span.end for _, span in leaked),
        leaked_type=column(code[span.entity_type] for _, span in leaked),
        leaked_condition=column((_CONDITION_CODE[span.conditions] for _, span in leaked), np.int8),
        leaked_text=[span.text for _, span in leaked],
        dropped_document=column(index for index, _, _ in dropped),
        dropped_type=column(code[name] for _, name, _ in dropped),
        dropped_count=column(count for _, _, count in dropped),
    )


def document_count_table(scores: Iterable[DocumentScore]) -> dict[str, np.ndarray]:
    """Per-document counts as numpy arrays, one entry per document, sorted by document id (then by counts).

    Keys: "document_id" (object array); every COUNT_FIELDS name (int64); "chars_typed.<TYPE>.{tp,fp,fn}"
    (int64) for every type seen, 0 where a document lacks the type; "leakage.<condition>.leaked" (bool).
    """
    scores = list(scores)
    ids = [score.document_id for score in scores]
    order = sorted(range(len(scores)), key=lambda i: (ids[i], scores[i].counts.tobytes()))
    stored = np.array([scores[i].counts[:N_STORED] for i in order], dtype=np.int64).reshape(-1, N_STORED)
    result: dict[str, np.ndarray] = {"document_id": np.array([ids[i] for i in order], dtype=object)}
    result.update((name, column.copy()) for name, column in expand_counts(stored).items())
    types = sorted({t for score in scores for t in score.types})
    for entity_type in types:
        rows = [scores[i].type_rows().get(entity_type) for i in order]
        for name in ("tp", "fp", "fn"):
            k = _TYPE_STORED_INDEX[f"chars_typed.{name}"]
            result[f"chars_typed.{entity_type}.{name}"] = np.array(
                [0 if row is None else row[k] for row in rows], dtype=np.int64
            )
    for condition in LEAKAGE_CONDITIONS:
        result[f"leakage.{condition}.leaked"] = result[f"leakage.{condition}.gold_spans_affected"] > 0
    return result
