"""Whole-corpus helpers for tests. Production scores chunks of columns (`score_span_columns`, chunked
and merged by `metrics.pipeline.spans`) and aggregates the merged scores (`aggregate`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields
from unittest.mock import patch

import numpy as np

from metrics.engine.spans import batch
from metrics.engine.spans.aggregate import aggregate
from metrics.engine.spans.score_table import SpanScores
from metrics.engine.spans.types import DocumentSpans
from metrics.pipeline import spans as span_pipeline
from metrics.pipeline.spans import merge_span_partials, score_span_chunk, span_chunks


def score_span_batches(
    docs: Sequence[DocumentSpans], *, allowed_predicted_types: frozenset[str] | None = None
) -> SpanScores:
    """The scores of the documents, in their order, scored in chunks of `batch.BATCH_DOCUMENTS`
    documents (read at each call, so that a test can patch it) and merged."""
    with patch.object(span_pipeline, "CHUNK_DOCUMENTS", batch.BATCH_DOCUMENTS):
        chunks = list(span_chunks(enumerate(docs), allowed_predicted_types=allowed_predicted_types))
    return merge_span_partials(map(score_span_chunk, chunks), len(docs))[0]


def same_scores(ours: SpanScores, theirs: SpanScores) -> bool:
    """Field by field: the same values, and columns of the same dtype and shape (the merge of any
    chunking must give the table of one pass to the column)."""
    for field in fields(SpanScores):
        mine, other = getattr(ours, field.name), getattr(theirs, field.name)
        if isinstance(mine, np.ndarray):
            if mine.dtype != other.dtype or not np.array_equal(mine, other):
                return False
        elif list(mine) != list(other):
            return False
    return True


def evaluate_documents(
    docs: Iterable[DocumentSpans], *, restrict_to_gt_types: bool = False, include_sensitive_text: bool = False
) -> dict:
    """Score every document and aggregate; with restrict_to_gt_types, predictions of a type absent
    from the whole data set's gold are dropped first (and counted)."""
    docs = list(docs)
    allowed = (
        frozenset(span.entity_type for doc in docs for span in doc.gold) if restrict_to_gt_types else None
    )
    scores = score_span_batches(docs, allowed_predicted_types=allowed)
    return aggregate(scores, include_sensitive_text=include_sensitive_text)
