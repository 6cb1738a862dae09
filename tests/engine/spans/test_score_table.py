"""SpanScores, the scores of many documents as columns: the same documents as the reference's
DocumentScores, whichever way they are built, cut, reordered or joined."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.engine.spans.aggregate import aggregate
from metrics.engine.spans.types import DocumentSpans, Span
from tests.engine.spans.oracle import document_scores, score_document, span_scores_of
from tests.engine.spans.results import score_span_batches
from tests.engine.spans.test_properties import corpora


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(max_documents=6), st.booleans())
def test_columns_built_from_document_scores_are_the_batch_scorers_columns(corpus, restrict):
    allowed = frozenset(span.entity_type for doc in corpus for span in doc.gold) if restrict else None
    columns = score_span_batches(corpus, allowed_predicted_types=allowed)
    reference = [score_document(doc, allowed_predicted_types=allowed) for doc in corpus]
    assert document_scores(columns) == reference
    rebuilt = span_scores_of(reference)
    assert document_scores(rebuilt) == reference
    assert rebuilt.counts.tolist() == columns.counts.tolist()
    assert rebuilt.rows.tolist() == columns.rows.tolist()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(max_documents=6), st.data())
def test_taking_and_joining_documents_moves_whole_documents(corpus, data):
    scores = score_span_batches(corpus)
    order = data.draw(st.permutations(range(len(corpus))))
    kept = order[: data.draw(st.integers(0, len(order)))]
    each = document_scores(scores)
    assert document_scores(scores.take(kept)) == [each[i] for i in kept]
    cut = data.draw(st.integers(0, len(corpus)))
    head, tail = scores.take(range(cut)), scores.take(range(cut, len(corpus)))
    assert document_scores(head.followed_by(tail)) == each


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(max_documents=6), st.booleans())
def test_type_rows_summed_give_the_same_results_body(corpus, sensitive):
    scores = score_span_batches(corpus)
    summed = scores.with_type_rows_summed(keep_leaked=sensitive)
    assert aggregate(summed, include_sensitive_text=sensitive) == aggregate(
        scores, include_sensitive_text=sensitive
    )
    assert len(summed.rows) == len(set(scores.row_type.tolist()))
    assert len(summed.leaked_text) == (len(scores.leaked_text) if sensitive else 0)


def test_type_rows_too_large_to_sum_in_int32_stay_as_they_are():
    doc = DocumentSpans("d", "a" * 10, [Span(0, 10, "NAME")], [Span(0, 10, "NAME")])
    scores = score_span_batches([doc, doc])
    huge = replace(scores, rows=np.full_like(scores.rows, 2**30))
    assert huge.with_type_rows_summed(keep_leaked=True).rows.tolist() == huge.rows.tolist()
