"""The results.json body of documents in one call, for tests: production scores in chunks
(`score_span_batches`) and aggregates their merged scores (`aggregate`)."""

from __future__ import annotations

from collections.abc import Iterable

from metrics.engine.spans import DocumentSpans, aggregate, score_span_batches


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
