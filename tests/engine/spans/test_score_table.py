"""SpanScores, the scores of many documents as columns: the same documents as the DocumentScores they
stand for, whichever way they are built, cut, reordered or joined."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.engine.spans import SpanScores, score_document, score_span_batches
from tests.engine.spans.test_properties import corpora


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(max_documents=6), st.booleans())
def test_columns_built_from_document_scores_are_the_batch_scorers_columns(corpus, restrict):
    allowed = frozenset(span.entity_type for doc in corpus for span in doc.gold) if restrict else None
    columns = score_span_batches(corpus, allowed_predicted_types=allowed)
    reference = [score_document(doc, allowed_predicted_types=allowed) for doc in corpus]
    assert list(columns) == reference
    rebuilt = SpanScores.of_scores(reference)
    assert list(rebuilt) == reference
    assert rebuilt.counts.tolist() == columns.counts.tolist()
    assert rebuilt.rows.tolist() == columns.rows.tolist()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(max_documents=6), st.data())
def test_taking_and_joining_documents_moves_whole_documents(corpus, data):
    scores = score_span_batches(corpus)
    order = data.draw(st.permutations(range(len(corpus))))
    kept = order[: data.draw(st.integers(0, len(order)))]
    assert list(scores.take(kept)) == [scores[i] for i in kept]
    cut = data.draw(st.integers(0, len(corpus)))
    head, tail = scores.take(range(cut)), scores.take(range(cut, len(corpus)))
    assert list(SpanScores.concatenate([head, tail])) == list(scores)
