"""Span (de-identification) scoring: docs/semantics.md section 1.

Build `DocumentSpans`, score each with `score_document` (anywhere: chunks, processes; many at once with
`score_document_batch`, the same scores, vectorised), then
`aggregate` the scores (`SpanScores`, columns; or `DocumentScore`s) into the results.json body. `evaluate_documents` does all three.
"""

from metrics.engine.spans.aggregate import (
    aggregate,
    as_span_scores,
    document_count_table,
    evaluate_documents,
    gold_types,
)
from metrics.engine.spans.batch import score_document_batch, score_span_batches
from metrics.engine.spans.code_point_ranges import LEFT_OUT_CHARACTERS
from metrics.engine.spans.document import score_document
from metrics.engine.spans.score import (
    COUNT_FIELDS,
    LEAKAGE_CONDITIONS,
    TYPE_FIELDS,
    DocumentScore,
    LeakedSpan,
)
from metrics.engine.spans.score_table import SpanScores
from metrics.engine.spans.types import DocumentSpans, Span

__all__ = [
    "COUNT_FIELDS",
    "LEAKAGE_CONDITIONS",
    "LEFT_OUT_CHARACTERS",
    "TYPE_FIELDS",
    "DocumentScore",
    "DocumentSpans",
    "LeakedSpan",
    "Span",
    "SpanScores",
    "aggregate",
    "as_span_scores",
    "document_count_table",
    "evaluate_documents",
    "gold_types",
    "score_document",
    "score_document_batch",
    "score_span_batches",
]
