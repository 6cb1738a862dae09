"""The span task's chunk, partial result and merge.

A chunk is paired documents as columns (`SpanColumns`) with their positions in gold order; its partial
result holds the chunk's scores as columns (`SpanScores`: an int32 matrix of per-document counts, one
of per-(document, type) counts, the leaked spans and dropped predictions as columns), and the
comparison rows a server chunk adds. `merge_span_partials` is the one place where chunks meet:
it puts the documents back in gold order, whatever order the chunks were scored in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from metrics.engine.spans import DocumentSpans
from metrics.engine.spans.batch import BATCH_DOCUMENTS, score_span_columns
from metrics.engine.spans.columns import SpanColumns
from metrics.engine.spans.score_table import SpanScores
from metrics.pipeline.executors import Executor
from metrics.pipeline.memory import release_free_memory

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
    """The scores of one chunk, as columns (`SpanScores`); `rows`: the comparison rows a server chunk
    adds."""

    positions: np.ndarray  # int64, gold position of each document
    scores: SpanScores
    rows: list[Any] = field(default_factory=list)


def score_span_chunk(chunk: SpanChunk) -> SpanPartial:
    """The partial result of one chunk: `score_document` of each of its documents, as columns."""
    return SpanPartial(
        np.asarray(chunk.positions, dtype=np.int64),
        score_span_columns(chunk.columns, chunk.allowed_predicted_types),
    )


def merge_span_partials(partials: Iterable[SpanPartial]) -> tuple[SpanScores, list[Any]]:
    """Every document's score in gold order, and the comparison rows in the same document order."""
    positioned: list[tuple[int, int, SpanPartial]] = []
    for partial in partials:
        first = int(partial.positions[0]) if len(partial.positions) else -1
        positioned.append((first, len(positioned), partial))
        # A chunk's big arrays (its code points scored here, or its pickle sent to a worker) are freed
        # between the small arrays the partial results keep; glibc keeps such holes, and chunk after
        # chunk the process grows by memory it does not use. Handing it back costs about a
        # millisecond a chunk.
        release_free_memory()
    positioned.sort(key=lambda item: item[:2])
    positions = (
        np.concatenate([partial.positions for _, _, partial in positioned]) if positioned else np.zeros(0)
    )
    rows_by_document: dict[str, list[Any]] = {}
    for _, _, partial in positioned:
        for row in partial.rows:
            rows_by_document.setdefault(row.document_id, []).append(row)
    parts = [partial.scores for _, _, partial in positioned]
    del positioned  # the parts are the only references left: joining lets go of them column by column
    scores = SpanScores.concatenate(parts)
    order = np.argsort(positions, kind="stable")
    if np.any(order != np.arange(len(order))):
        scores = scores.take(order)
    rows = [row for document_id in scores.document_ids for row in rows_by_document.get(document_id, ())]
    return scores, rows


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
) -> SpanScores:
    """Chunk, score with `executor` and merge: every paired document's score, in gold order."""
    chunks = span_chunks(paired, allowed_predicted_types=allowed_predicted_types)
    scores, _ = merge_span_partials(executor.map(score_span_chunk, chunks))
    return scores
