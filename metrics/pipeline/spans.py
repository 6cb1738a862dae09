"""The span task's chunk, partial result and merge (the one place where chunks meet)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from metrics.engine.spans.batch import BATCH_DOCUMENTS, score_span_columns
from metrics.engine.spans.columns import SpanColumns
from metrics.engine.spans.score import N_STORED
from metrics.engine.spans.score_table import DOCUMENT_GROUPS, SpanScores
from metrics.engine.spans.types import DocumentSpans

# Documents per chunk: one numpy pass of the batch scorer.
CHUNK_DOCUMENTS = BATCH_DOCUMENTS

ProgressCallback = Callable[[int, int], None]
"""Called with (documents scored, documents in gold) as scoring advances."""


@dataclass
class SpanChunk:
    """Paired documents to score together, as columns, and where each stands in gold order. Columns
    and strings pickle in C: a chunk crosses to another process as it is."""

    positions: list[int]
    columns: SpanColumns
    allowed_predicted_types: frozenset[str] | None = None
    keep_leaked: bool = True  # False: the scores list no leaked span (`score_span_columns`)


@dataclass
class SpanPartial:
    """The scores of one chunk; `rows`: the comparison rows a server chunk adds."""

    positions: np.ndarray  # int64, gold position of each document
    scores: SpanScores
    rows: list[Any] = field(default_factory=list)


def score_span_chunk(chunk: SpanChunk) -> SpanPartial:
    return SpanPartial(
        np.asarray(chunk.positions, dtype=np.int64),
        score_span_columns(chunk.columns, chunk.allowed_predicted_types, keep_leaked=chunk.keep_leaked),
    )


def merge_span_partials(
    partials: Iterable[SpanPartial], documents: int, progress: ProgressCallback | None = None
) -> tuple[SpanScores, list[Any]]:
    """Every document's score in gold order, and the comparison rows in that order. Each partial is
    copied into the merged columns (sized for `documents` from the start) and let go at once, so the
    partials and the merged result are never all held together."""
    merged = _MergedScores(documents)
    rows_by_document: dict[str, list[Any]] = {}
    for partial in partials:
        merged.add(partial)
        if progress is not None:
            progress(merged.added, documents)
        for row in partial.rows:
            rows_by_document.setdefault(row.document_id, []).append(row)
        del partial
    scores = merged.scores()
    rows = [row for document_id in scores.document_ids for row in rows_by_document.get(document_id, ())]
    return scores, rows


class _Growing:
    """A column appended to in place. Its buffer is grown and, at the end, cut to size by `resize`
    (realloc, which moves no bytes for a large buffer): growing never holds the old and the new
    buffer at once."""

    def __init__(self, like: np.ndarray) -> None:
        self.buffer = np.zeros((0, *like.shape[1:]), dtype=like.dtype)
        self.used = 0

    def append(self, values: np.ndarray, expected: int = 0) -> None:
        """Append `values`; `expected`: how many entries the column is likely to end with."""
        needed = self.used + len(values)
        if needed > len(self.buffer):
            size = max(needed, expected, len(self.buffer) + len(self.buffer) // 8)
            self.buffer.resize((size, *self.buffer.shape[1:]), refcheck=False)
        self.buffer[self.used : needed] = values
        self.used = needed

    def values(self) -> np.ndarray:
        """The column, its buffer cut to size (the object lets go of it)."""
        buffer, self.buffer = self.buffer, np.zeros((0, *self.buffer.shape[1:]), dtype=self.buffer.dtype)
        buffer.resize((self.used, *buffer.shape[1:]), refcheck=False)
        return buffer


# The array columns of the groups keyed by document (the leaked spans' text, a list, is extended apart).
_GROWN = tuple(
    name
    for name in SpanScores.__dataclass_fields__
    if name.startswith(DOCUMENT_GROUPS) and name != "leaked_text"
)


class _MergedScores:
    """The merge's columns, filled partial by partial: counts and ids at the documents' gold positions,
    the other columns appended (by gold position and type code in arrival order, put in order at
    the end)."""

    def __init__(self, documents: int) -> None:
        self.documents = documents
        self.counts = np.zeros((self.documents, N_STORED), dtype=np.int32)
        self.seen = np.zeros(self.documents, dtype=bool)
        self.ids = np.empty(self.documents, dtype=object)
        empty = SpanScores.empty()
        self.columns = {name: _Growing(getattr(empty, name)) for name in _GROWN}
        self.leaked_text: list[str] = []
        self.names: dict[str, int] = {}
        self.in_order = True
        self.last = -1
        self.added = 0

    def add(self, partial: SpanPartial) -> None:
        positions, scores = partial.positions, partial.scores
        if not len(positions):
            return
        increasing = bool(np.all(np.diff(positions) > 0))
        self.in_order = self.in_order and int(positions[0]) > self.last and increasing
        self.last = max(self.last, int(positions.max()))
        self.counts[positions] = scores.counts
        self.seen[positions] = True
        self.ids[positions] = scores.document_ids
        self.added += len(positions)
        codes = np.array([self.names.setdefault(name, len(self.names)) for name in scores.type_names] or [0])
        for name in _GROWN:
            values = getattr(scores, name)
            if name.endswith("_document"):
                values = positions[values]
            elif name.endswith("_type"):
                values = codes[values]
            # Sized for the whole run from the chunks so far, so that a column seldom grows.
            column = self.columns[name]
            expected = (column.used + len(values)) * self.documents // self.added * 21 // 20
            column.append(values, expected)
        self.leaked_text.extend(scores.leaked_text)

    def scores(self) -> SpanScores:
        """The merged columns, documents in gold order (positions ranked: a missing one leaves no gap)."""
        if not self.added:
            return SpanScores.empty()
        kept = np.flatnonzero(self.seen)
        index = np.cumsum(self.seen) - 1  # a gold position's document index
        names = sorted(self.names)
        rank = np.zeros(max(len(self.names), 1), dtype=np.int64)
        rank[[self.names[name] for name in names]] = np.arange(len(names))
        columns = {name: column.values() for name, column in self.columns.items()}
        del self.columns
        for group in DOCUMENT_GROUPS:
            columns[f"{group}_document"] = index[columns[f"{group}_document"]]
            columns[f"{group}_type"] = rank[columns[f"{group}_type"]]
        leaked_text = self.leaked_text
        if not self.in_order:
            for group in DOCUMENT_GROUPS:
                order = np.argsort(columns[f"{group}_document"], kind="stable")
                for other in [column for column in _GROWN if column.startswith(group)]:
                    columns[other] = columns[other][order]
                if group == "leaked":
                    leaked_text = [leaked_text[k] for k in order.tolist()]
        dense = len(kept) == len(self.counts)
        return SpanScores(
            document_ids=(self.ids if dense else self.ids[kept]).tolist(),
            counts=self.counts if dense else self.counts[kept],
            type_names=tuple(names),
            leaked_text=leaked_text,
            **columns,
        )


def span_chunks(
    paired: Iterable[tuple[int, DocumentSpans]],
    *,
    allowed_predicted_types: frozenset[str] | None,
    keep_leaked: bool = True,
) -> Iterator[SpanChunk]:
    """Paired documents (gold position, document) in chunks of CHUNK_DOCUMENTS."""
    stream = iter(paired)
    while batch := list(islice(stream, CHUNK_DOCUMENTS)):
        positions, documents = zip(*batch, strict=True)
        yield SpanChunk(
            list(positions), SpanColumns.of_documents(documents), allowed_predicted_types, keep_leaked
        )
