"""Span (de-identification) scoring: docs/semantics.md section 1.

Score each chunk of documents, as columns, with `score_span_columns` (`SpanScores`: integer counts per
document and per type, which add up across chunks), then `aggregate` the scores into the results.json
body.
"""

from metrics.engine.spans.aggregate import aggregate
from metrics.engine.spans.batch import score_span_columns
from metrics.engine.spans.code_point_line import LEFT_OUT_CHARACTERS
from metrics.engine.spans.score import COUNT_FIELDS, LEAKAGE_CONDITIONS
from metrics.engine.spans.score_table import SpanScores
from metrics.engine.spans.types import DocumentSpans, Span

__all__ = [
    "COUNT_FIELDS",
    "LEAKAGE_CONDITIONS",
    "LEFT_OUT_CHARACTERS",
    "DocumentSpans",
    "Span",
    "SpanScores",
    "aggregate",
    "score_span_columns",
]
