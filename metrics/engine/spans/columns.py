"""A batch of paired documents as columns: what the batch scorer reads.

A reader that builds these straight from the input's bytes never makes a Python object per span;
`SpanColumns.of_documents` builds them from `DocumentSpans` for every other caller. Offsets are code
points into the document's text, `end` exclusive, as in `DocumentSpans`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

import numpy as np

from metrics.engine.spans.types import DocumentSpans, Span

_START, _END, _TYPE = attrgetter("start"), attrgetter("end"), attrgetter("entity_type")


@dataclass(frozen=True, slots=True)
class SpanSide:
    """One side's spans (gold or predicted) of a batch, in any order; int64 columns of one length."""

    document: np.ndarray  # the span's document: its index in the batch
    start: np.ndarray
    end: np.ndarray
    type_code: np.ndarray  # index into SpanColumns.type_names

    def __len__(self) -> int:
        return len(self.start)

    @classmethod
    def of_spans(cls, spans_per_document: Sequence[Sequence[Span]], code_of: dict[str, int]) -> SpanSide:
        counts = np.fromiter(map(len, spans_per_document), dtype=np.int64, count=len(spans_per_document))
        flat = list(chain.from_iterable(spans_per_document))
        n = len(flat)
        return cls(
            document=np.repeat(np.arange(len(spans_per_document), dtype=np.int64), counts),
            start=np.fromiter(map(_START, flat), dtype=np.int64, count=n),
            end=np.fromiter(map(_END, flat), dtype=np.int64, count=n),
            type_code=np.fromiter(map(code_of.__getitem__, map(_TYPE, flat)), dtype=np.int64, count=n),
        )

    def between(self, first: int, stop: int) -> SpanSide:
        """The spans of documents first to stop - 1, numbered from 0."""
        kept = (self.document >= first) & (self.document < stop)
        return SpanSide(self.document[kept] - first, self.start[kept], self.end[kept], self.type_code[kept])


@dataclass(frozen=True, slots=True)
class SpanColumns:
    """Paired documents (id, text) with their gold and predicted spans as columns.

    `type_names` are the distinct entity types the codes stand for, in any order (the scorer numbers
    them afresh in sorted order).
    """

    document_ids: Sequence[str]
    texts: Sequence[str]
    type_names: Sequence[str]
    gold: SpanSide
    predicted: SpanSide

    def __len__(self) -> int:
        return len(self.document_ids)

    @classmethod
    def of_documents(cls, documents: Sequence[DocumentSpans]) -> SpanColumns:
        type_names = sorted(
            {span.entity_type for document in documents for span in chain(document.gold, document.predicted)}
        )
        code_of = {name: code for code, name in enumerate(type_names)}
        return cls(
            document_ids=[document.document_id for document in documents],
            texts=[document.text for document in documents],
            type_names=type_names,
            gold=SpanSide.of_spans([document.gold for document in documents], code_of),
            predicted=SpanSide.of_spans([document.predicted for document in documents], code_of),
        )

    def between(self, first: int, stop: int) -> SpanColumns:
        """Documents first to stop - 1."""
        return SpanColumns(
            self.document_ids[first:stop],
            self.texts[first:stop],
            self.type_names,
            self.gold.between(first, stop),
            self.predicted.between(first, stop),
        )
