"""The batch scorer counts what the reference scorer counts: every document's score equal, field by field.

`score_document` (`oracle`) is the reference (its counts are checked against brute force and nervaluate
in spans/test_properties and spans/test_nervaluate_agreement); the batch scorer must agree with it on
random corpora full of nested, duplicate, touching and competing spans, with and without
restrict_to_gt_types, and raise the same error for a span outside its text.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.engine.spans import batch as batch_module
from metrics.engine.spans.batch import score_span_columns
from metrics.engine.spans.columns import SpanColumns
from metrics.engine.spans.score import STORED_FIELDS, TYPE_STORED_FIELDS
from metrics.engine.spans.types import DocumentSpans, Span
from tests.engine.spans.oracle import score_document, score_document_batch
from tests.engine.spans.results import same_scores

TYPES = ("NAME", "DATE", "ID", "AGE")
# Letters, digits, left-out characters, an underscore, Latin-1 and beyond (other code point paths).
ALPHABET = "ab1ä ,.-_\n\t€🙂"


@st.composite
def documents(draw: st.DrawFn, document_id: str) -> DocumentSpans:
    text = draw(st.text(alphabet=ALPHABET, max_size=60))

    def spans() -> list[Span]:
        if not text:
            return []
        found = []
        for _ in range(draw(st.integers(0, 8))):
            start = draw(st.integers(0, len(text) - 1))
            end = draw(st.integers(start + 1, min(len(text), start + draw(st.integers(1, 12)))))
            found.append(Span(start, end, draw(st.sampled_from(TYPES))))
        return found

    gold = spans()
    # Predictions often copy gold spans (exact matches), sometimes shifted, plus spans of their own.
    copied = [span for span in gold if draw(st.booleans())]
    return DocumentSpans(document_id, text, gold, copied + spans())


corpora = st.integers(1, 6).flatmap(lambda n: st.tuples(*(documents(f"doc-{i}") for i in range(n))))


def described(score) -> dict:
    """A DocumentScore as named fields, for readable failures."""
    names = [*STORED_FIELDS, *(f"{t}.{f}" for t in score.types for f in TYPE_STORED_FIELDS)]
    return {
        "document_id": score.document_id,
        "types": score.types,
        "counts": dict(zip(names, score.counts, strict=True)),
        "leaked_spans": score.leaked_spans,
        "dropped_by_type": score.dropped_by_type,
    }


@settings(max_examples=400, deadline=None)
@given(corpus=corpora, restrict=st.sampled_from([None, frozenset({"NAME"}), frozenset({"NAME", "ID"})]))
def test_batch_scores_equal_document_scores(corpus, restrict):
    expected = [described(score_document(doc, allowed_predicted_types=restrict)) for doc in corpus]
    actual = [
        described(score) for score in score_document_batch(list(corpus), allowed_predicted_types=restrict)
    ]
    assert actual == expected


# The chunk size is patched once for the whole test; every example runs with it.
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpus=corpora)
def test_chunking_changes_nothing(corpus, monkeypatch_chunk_size):
    expected = [described(score_document(doc)) for doc in corpus]
    assert [described(score) for score in score_document_batch(list(corpus))] == expected


@pytest.fixture
def monkeypatch_chunk_size(monkeypatch):
    monkeypatch.setattr(batch_module, "BATCH_DOCUMENTS", 2)


def test_documents_scored_are_independent_of_their_neighbours():
    # A span ending at the very end of one text must not touch a span starting the next text.
    first = DocumentSpans("a", "Anna", [Span(0, 4, "NAME")], [Span(2, 4, "NAME")])
    second = DocumentSpans("b", "Bert", [Span(0, 4, "NAME")], [Span(0, 2, "NAME")])
    alone = [described(score_document(doc)) for doc in (first, second)]
    assert [described(score) for score in score_document_batch([first, second])] == alone


def test_a_span_outside_its_text_raises_the_reference_error():
    valid = DocumentSpans("ok", "Anna Meier", [Span(0, 4, "NAME")], [])
    invalid = DocumentSpans("bad", "Anna", [Span(0, 4, "NAME")], [Span(2, 9, "NAME")])
    with pytest.raises(ValueError) as reference:
        score_document(invalid)
    with pytest.raises(ValueError) as batched:
        score_document_batch([valid, invalid])
    assert str(batched.value) == str(reference.value)
    assert "'bad'" in str(batched.value)


@st.composite
def spoiled(draw: st.DrawFn, doc: DocumentSpans) -> DocumentSpans:
    """The document with spans that are empty, reversed or outside its text added to either side."""

    def bad_spans() -> list[Span]:
        n = len(doc.text)
        bounds = st.sampled_from([(-1, 1), (n, n + 2), (0, n + 1), (1, 1), (2, 1)])
        return [Span(*draw(bounds), draw(st.sampled_from(TYPES))) for _ in range(draw(st.integers(0, 2)))]

    return DocumentSpans(doc.document_id, doc.text, [*doc.gold, *bad_spans()], [*doc.predicted, *bad_spans()])


@settings(max_examples=200, deadline=None)
@given(data=st.data(), restrict=st.sampled_from([None, frozenset({"NAME"})]))
def test_spans_outside_their_text_raise_the_reference_error(data, restrict):
    corpus = [data.draw(spoiled(doc)) for doc in data.draw(corpora)]
    expected = None
    for doc in corpus:
        try:
            score_document(doc, allowed_predicted_types=restrict)
        except ValueError as error:
            expected = str(error)
            break
    if expected is None:
        score_document_batch(corpus, allowed_predicted_types=restrict)
        return
    with pytest.raises(ValueError) as batched:
        score_document_batch(corpus, allowed_predicted_types=restrict)
    assert str(batched.value) == expected


def test_no_documents_no_scores():
    assert score_document_batch([]) == []


def test_competing_predictions_take_nervaluates_walk():
    # Two predictions overlap one gold span: which one claims it is nervaluate's order, not ours.
    doc = DocumentSpans(
        "d",
        "Dr. Anna Maria Meier",
        [Span(4, 14, "NAME"), Span(15, 20, "NAME")],
        [Span(4, 8, "NAME"), Span(4, 14, "DATE"), Span(9, 20, "NAME")],
    )
    assert described(score_document_batch([doc])[0]) == described(score_document(doc))


def test_competing_claims_are_counted_apart_from_the_documents_plain_matches():
    # Claims compete over "Anna Maria Meier" (walked: a prediction has two candidates there) and over
    # "Bert Huber" (one gold span: the first prediction claims it, on the NAME line too); the last
    # "Huber" matches plainly on its own.
    doc = DocumentSpans(
        "d",
        "Dr. Anna Maria Meier und Bert Huber, Huber",
        [Span(4, 14, "NAME"), Span(15, 20, "NAME"), Span(25, 35, "NAME"), Span(37, 42, "ID")],
        [
            *(Span(4, 8, "NAME"), Span(4, 14, "DATE"), Span(9, 20, "NAME")),
            *(Span(25, 29, "ID"), Span(25, 35, "NAME"), Span(30, 35, "NAME")),
            Span(37, 42, "NAME"),
        ],
    )
    assert described(score_document_batch([doc])[0]) == described(score_document(doc))


SMALL_CORPUS = [
    DocumentSpans(
        "a", "Anna Meier, 12.3.1950", [Span(0, 10, "NAME"), Span(12, 21, "DATE")], [Span(0, 4, "NAME")]
    ),
    DocumentSpans("b", "Bert Huber", [Span(0, 10, "NAME")], [Span(0, 10, "NAME"), Span(5, 10, "ID")]),
    DocumentSpans("c", "ohne Namen", [], [Span(0, 4, "NAME")]),
]


def test_chunks_of_one_document_each_change_nothing(monkeypatch):
    monkeypatch.setattr(batch_module, "BATCH_DOCUMENTS", 1)
    expected = [described(score_document(doc)) for doc in SMALL_CORPUS]
    assert [described(score) for score in score_document_batch(SMALL_CORPUS)] == expected


def test_a_batch_too_long_for_64_bit_keys_is_scored_in_halves(monkeypatch):
    # (3 types + 1) * (line length + 2) ** 2: 2116 for "a" alone and for "b" and "c", 8100 for all three.
    monkeypatch.setattr(batch_module, "_LARGEST_KEY", 2500)
    expected = [described(score_document(doc)) for doc in SMALL_CORPUS]
    assert [described(score) for score in score_document_batch(SMALL_CORPUS)] == expected


def test_a_single_text_too_long_for_64_bit_keys_fails_loudly(monkeypatch):
    monkeypatch.setattr(batch_module, "_LARGEST_KEY", 1)
    with pytest.raises(OverflowError, match="document 'a': 21 code points are too many to score"):
        score_document_batch(SMALL_CORPUS)


@settings(max_examples=100, deadline=None)
@given(corpus=corpora)
def test_without_keep_leaked_the_counts_stay_and_no_leaked_span_is_listed(corpus):
    columns = SpanColumns.of_documents(list(corpus))
    full = score_span_columns(columns)
    unlisted = score_span_columns(columns, keep_leaked=False)
    assert len(unlisted.leaked_document) == len(unlisted.leaked_text) == 0
    assert (unlisted.counts == full.counts).all()
    assert (unlisted.rows == full.rows).all()
    # All that the results body without sensitive text reads of the scores.
    assert same_scores(
        unlisted.with_type_rows_summed(keep_leaked=False), full.with_type_rows_summed(keep_leaked=False)
    )
