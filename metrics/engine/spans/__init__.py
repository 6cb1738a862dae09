"""Span (de-identification) scoring: docs/semantics.md section 1.

Score each chunk of documents, as columns, with `batch.score_span_columns` (`SpanScores`: integer
counts per document and per type, which add up across chunks), then `aggregate` the scores into the
results.json body.
"""
