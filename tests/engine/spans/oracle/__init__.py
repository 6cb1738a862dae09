"""The reference span scorer: one document at a time, in plain Python, with bisections over merged
ranges (`code_point_ranges`) instead of numpy columns.

Production scores spans one way, the columnar batch (`metrics.engine.spans.batch`). This scorer
computes the same counts by a different route, and its counts are checked against brute force and
nervaluate (`test_properties`, `test_nervaluate_agreement`): the batch is held equal to it, document by
document and field by field (`test_batch`). `DocumentScore` is its result, and `document_scores` shows
the batch's columns in that shape.
"""

from tests.engine.spans.oracle.document import score_document
from tests.engine.spans.oracle.document_score import (
    DocumentScore,
    document_count_table,
    document_scores,
    score_document_batch,
    span_scores_of,
)

__all__ = [
    "DocumentScore",
    "document_count_table",
    "document_scores",
    "score_document",
    "score_document_batch",
    "span_scores_of",
]
