"""The span chunks merge to one pass: for any corpus, any cut into chunks and any order the chunks
come back in, `merge_span_partials` gives the score columns of one pass over the whole corpus
(`score_span_batches`), in gold order, field by field, and so every document's score; in this process
and in a process pool."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.engine.spans.aggregate import aggregate
from metrics.engine.spans.columns import SpanColumns
from metrics.engine.spans.score import N_STORED, N_TYPE_STORED
from metrics.engine.spans.types import DocumentSpans, Span
from metrics.pipeline import spans as span_pipeline
from metrics.pipeline.executors import InProcess, ProcessPool
from metrics.pipeline.spans import (
    SpanChunk,
    SpanPartial,
    merge_span_partials,
    score_span_chunk,
    span_chunks,
)
from tests.engine.spans.oracle import document_scores, score_document_batch, span_scores_of
from tests.engine.spans.results import same_scores, score_span_batches
from tests.engine.spans.test_properties import corpora


@st.composite
def chunkings(draw: st.DrawFn, max_documents: int = 8):
    """A corpus, cut points into it, and an order to merge the chunks in."""
    corpus = draw(corpora(max_documents=max_documents))
    cuts = sorted(draw(st.sets(st.integers(1, max(len(corpus) - 1, 1)), max_size=len(corpus))))
    bounds = [0, *[cut for cut in cuts if cut < len(corpus)], len(corpus)]
    chunks = [
        list(range(start, stop)) for start, stop in zip(bounds, bounds[1:], strict=False) if start < stop
    ]
    order = draw(st.permutations(range(len(chunks))))
    restrict = draw(st.booleans())
    return corpus, chunks, order, restrict


def one_pass(corpus: list[DocumentSpans], allowed: frozenset[str] | None) -> list:
    return score_document_batch(corpus, allowed_predicted_types=allowed)


def allowed_types(corpus: list[DocumentSpans], restrict: bool) -> frozenset[str] | None:
    return frozenset(span.entity_type for doc in corpus for span in doc.gold) if restrict else None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunkings())
def test_the_merge_of_any_chunking_equals_one_pass(case):
    corpus, chunks, order, restrict = case
    allowed = allowed_types(corpus, restrict)
    partials = [
        score_span_chunk(
            SpanChunk(positions, SpanColumns.of_documents([corpus[i] for i in positions]), allowed)
        )
        for positions in chunks
    ]
    merged, rows = merge_span_partials((partials[k] for k in order), len(corpus))
    assert same_scores(merged, score_span_batches(corpus, allowed_predicted_types=allowed))
    expected = one_pass(corpus, allowed)
    assert document_scores(merged) == expected  # document by document: counts, types, leaked, dropped
    assert rows == []
    assert aggregate(merged, include_sensitive_text=True) == aggregate(
        span_scores_of(expected), include_sensitive_text=True
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunkings())
def test_a_chunk_and_its_partial_result_cross_a_process_boundary_unchanged(case):
    corpus, chunks, _, restrict = case
    allowed = allowed_types(corpus, restrict)
    chunk = SpanChunk(chunks[0], SpanColumns.of_documents([corpus[i] for i in chunks[0]]), allowed)
    partial = score_span_chunk(pickle.loads(pickle.dumps(chunk)))
    copy = pickle.loads(pickle.dumps(partial))
    assert same_scores(copy.scores, score_span_chunk(chunk).scores)
    assert np.array_equal(copy.positions, partial.positions)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunkings(max_documents=12), st.integers(1, 4))
def test_a_process_pool_gives_the_scores_of_one_pass(case, chunk_documents):
    corpus, _, _, restrict = case
    allowed = allowed_types(corpus, restrict)
    paired = list(enumerate(corpus))[::-1]  # predictions in another order than gold

    def scores(executor):
        chunks = span_chunks(paired, allowed_predicted_types=allowed)
        return merge_span_partials(executor.map(score_span_chunk, chunks), len(corpus))[0]

    pooled, here = scores(ProcessPool(2)), scores(InProcess())
    assert document_scores(pooled) == document_scores(here) == one_pass(corpus, allowed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(span_pipeline, "CHUNK_DOCUMENTS", chunk_documents)
        chunks = list(span_chunks(paired, allowed_predicted_types=allowed))
    assert [position for chunk in chunks for position in chunk.positions] == list(range(len(corpus)))[::-1]


def test_a_partial_result_holds_its_counts_as_int32_matrices():
    corpus = [
        DocumentSpans("a", "Anna Schmidt", [Span(0, 4, "NAME")], []),
        DocumentSpans("b", "Berlin", [], []),
    ]
    partial = score_span_chunk(SpanChunk([0, 1], SpanColumns.of_documents(corpus)))
    assert isinstance(partial, SpanPartial)
    assert partial.scores.counts.dtype.name == "int32" and partial.scores.counts.shape == (2, N_STORED)
    assert partial.scores.rows.dtype.name == "int32" and partial.scores.rows.shape == (1, N_TYPE_STORED)
    assert partial.scores.row_document.tolist() == [0]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunkings(), st.data())
def test_the_merge_sized_in_advance_or_missing_chunks_still_gives_one_pass(case, data):
    corpus, chunks, order, restrict = case
    allowed = allowed_types(corpus, restrict)
    partials = [
        score_span_chunk(
            SpanChunk(positions, SpanColumns.of_documents([corpus[i] for i in positions]), allowed)
        )
        for positions in chunks
    ]
    sized, _ = merge_span_partials((partials[k] for k in order), len(corpus))
    assert same_scores(sized, score_span_batches(corpus, allowed_predicted_types=allowed))
    # Documents that never came (a run stopped at its first problem) leave no gap in the columns.
    kept = sorted(data.draw(st.sets(st.sampled_from(range(len(chunks))))))
    remaining = [corpus[i] for k in kept for i in chunks[k]]
    merged, _ = merge_span_partials((partials[k] for k in kept), len(corpus))
    assert same_scores(merged, score_span_batches(remaining, allowed_predicted_types=allowed))


def test_the_merge_reports_the_documents_merged_after_each_partial():
    corpus = [DocumentSpans(name, "Anna Schmidt", [Span(0, 4, "NAME")], []) for name in "abcde"]
    partials = [
        score_span_chunk(SpanChunk(positions, SpanColumns.of_documents([corpus[i] for i in positions])))
        for positions in ([3, 4], [0], [1, 2])
    ]
    heard: list[tuple[int, int]] = []
    merge_span_partials(partials, len(corpus), lambda done, total: heard.append((done, total)))
    assert heard == [(2, 5), (3, 5), (5, 5)]
