"""The span task's chunk, partial result and merge.

A chunk is paired documents as columns (`SpanColumns`) with their positions in gold order; its partial result holds
the chunk's per-document counts as columns (one flat int32 column of every document's stored
counts, cut by `count_ends`), the types, leaked spans and dropped predictions of each document, and
the comparison rows a server chunk adds. `merge_span_partials` is the one place where chunks meet:
it puts the documents back in gold order, whatever order the chunks were scored in.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from metrics.engine.spans import DocumentScore, DocumentSpans, LeakedSpan
from metrics.engine.spans.batch import BATCH_DOCUMENTS, score_span_columns
from metrics.engine.spans.columns import SpanColumns
from metrics.pipeline.executors import Executor

# Documents per chunk: one numpy pass of the batch scorer.
CHUNK_DOCUMENTS = BATCH_DOCUMENTS


@dataclass
class SpanChunk:
    """Paired documents to score together, as columns, and where each stands in gold order. Columns
    and strings pickle in C: a chunk crosses to another process as it is."""

    positions: list[int]
    columns: SpanColumns
    allowed_predicted_types: frozenset[str] | None = None

    @classmethod
    def of_documents(
        cls,
        positions: list[int],
        documents: Sequence[DocumentSpans],
        allowed_predicted_types: frozenset[str] | None = None,
    ) -> SpanChunk:
        return cls(positions, SpanColumns.of_documents(documents), allowed_predicted_types)


@dataclass
class SpanPartial:
    """The scores of one chunk, as columns; `rows`: the comparison rows a server chunk adds."""

    positions: np.ndarray  # int64, gold position of each document
    document_ids: list[str]
    counts: np.ndarray  # int32, every document's stored counts end to end
    count_ends: np.ndarray  # int64, where each document's counts end in `counts`
    types: list[tuple[str, ...]]
    leaked_spans: list[tuple[tuple[Any, ...], ...]]
    dropped_by_type: list[tuple[tuple[str, int], ...]]
    rows: list[Any] = field(default_factory=list)

    @classmethod
    def of(cls, positions: Sequence[int], scores: Sequence[DocumentScore]) -> SpanPartial:
        lengths = np.fromiter((len(score.counts) for score in scores), dtype=np.int64, count=len(scores))
        counts = np.frombuffer(b"".join(score.counts.tobytes() for score in scores), dtype=np.int32)
        return cls(
            positions=np.asarray(positions, dtype=np.int64),
            document_ids=[score.document_id for score in scores],
            counts=counts,
            count_ends=np.cumsum(lengths),
            types=[score.types for score in scores],
            leaked_spans=[tuple(map(tuple, score.leaked_spans)) for score in scores],
            dropped_by_type=[score.dropped_by_type for score in scores],
        )

    def scores(self) -> Iterator[DocumentScore]:
        """The chunk's DocumentScores, as `score_document` gives them."""
        counts = self.counts.tobytes()
        start = 0
        for index, end in enumerate(self.count_ends.tolist()):
            yield DocumentScore(
                document_id=self.document_ids[index],
                counts=array("i", counts[4 * start : 4 * end]),
                # As score_document does: one string per type, not one per document.
                types=tuple(map(sys.intern, self.types[index])),
                leaked_spans=tuple(LeakedSpan(*span) for span in self.leaked_spans[index]),
                dropped_by_type=self.dropped_by_type[index],
            )
            start = end


def score_span_chunk(chunk: SpanChunk) -> SpanPartial:
    """The partial result of one chunk: `score_document` of each of its documents."""
    return SpanPartial.of(chunk.positions, score_span_columns(chunk.columns, chunk.allowed_predicted_types))


def merge_span_partials(partials: Iterable[SpanPartial]) -> tuple[list[DocumentScore], list[Any]]:
    """Every document's score in gold order, and the comparison rows in the same document order."""
    positioned: list[tuple[int, int, SpanPartial]] = []
    for partial in partials:
        first = int(partial.positions[0]) if len(partial.positions) else -1
        positioned.append((first, len(positioned), partial))
    scores: list[tuple[int, DocumentScore]] = []
    rows_by_document: dict[str, list[Any]] = {}
    for _, _, partial in sorted(positioned, key=lambda item: item[:2]):
        scores.extend(zip(partial.positions.tolist(), partial.scores(), strict=True))
        for row in partial.rows:
            rows_by_document.setdefault(row.document_id, []).append(row)
    scores.sort(key=lambda item: item[0])
    ordered = [score for _, score in scores]
    rows = [row for score in ordered for row in rows_by_document.get(score.document_id, ())]
    return ordered, rows


def span_chunks(
    paired: Iterable[tuple[int, DocumentSpans]],
    *,
    allowed_predicted_types: frozenset[str] | None,
    size: int | None = None,
) -> Iterator[SpanChunk]:
    """Paired documents (gold position, document) in chunks of `size` (default CHUNK_DOCUMENTS)."""
    size = size or CHUNK_DOCUMENTS
    stream = iter(paired)
    while batch := list(islice(stream, size)):
        yield SpanChunk.of_documents(
            [position for position, _ in batch], [document for _, document in batch], allowed_predicted_types
        )


def score_span_documents(
    paired: Iterable[tuple[int, DocumentSpans]],
    *,
    executor: Executor,
    allowed_predicted_types: frozenset[str] | None = None,
) -> list[DocumentScore]:
    """Chunk, score with `executor` and merge: every paired document's score, in gold order."""
    chunks = span_chunks(paired, allowed_predicted_types=allowed_predicted_types)
    scores, _ = merge_span_partials(executor.map(score_span_chunk, chunks))
    return scores
