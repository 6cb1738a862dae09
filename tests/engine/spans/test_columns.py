"""`SpanColumns`: paired documents as columns."""

from dataclasses import replace

import numpy as np

from metrics.engine.spans.batch import score_span_columns
from metrics.engine.spans.columns import SpanColumns, SpanSide
from metrics.engine.spans.types import DocumentSpans, Span
from tests.engine.spans.results import same_scores

LETTER = DocumentSpans(
    "letter",
    "Anna Schmidt, geb. 01.02.1960",
    [Span(0, 12, "PERSON_NAME"), Span(19, 29, "DATE_OF_BIRTH")],
    [Span(0, 4, "PERSON_NAME"), Span(19, 29, "OTHER_DATE")],
)
EMPTY = DocumentSpans("empty", "nichts", [], [])


def test_documents_become_columns():
    columns = SpanColumns.of_documents([LETTER, EMPTY])
    assert columns.type_names == ["DATE_OF_BIRTH", "OTHER_DATE", "PERSON_NAME"]
    assert columns.gold.document.tolist() == [0, 0]
    assert columns.predicted.start.tolist() == [0, 19]
    assert columns.predicted.type_code.tolist() == [2, 1]


def test_documents_between_two_positions_are_columns_of_their_own():
    columns = SpanColumns.of_documents([EMPTY, LETTER, EMPTY])
    letter = columns.between(1, 2)
    assert (letter.document_ids, letter.texts) == (["letter"], [LETTER.text])
    assert letter.gold.document.tolist() == [0, 0]
    assert letter.predicted.end.tolist() == [4, 29]
    assert same_scores(score_span_columns(letter), score_span_columns(SpanColumns.of_documents([LETTER])))


def test_type_codes_in_any_order_score_as_the_sorted_ones():
    """A reader may number types as it meets them; the scorer renumbers them."""
    reordered = SpanColumns(
        document_ids=["letter"],
        texts=[LETTER.text],
        type_names=["PERSON_NAME", "OTHER_DATE", "DATE_OF_BIRTH"],
        gold=SpanSide(np.array([0, 0]), np.array([0, 19]), np.array([12, 29]), np.array([0, 2])),
        predicted=SpanSide(np.array([0, 0]), np.array([0, 19]), np.array([4, 29]), np.array([0, 1])),
    )
    assert same_scores(score_span_columns(reordered), score_span_columns(SpanColumns.of_documents([LETTER])))


def test_same_scores_compares_score_tables_column_by_column():
    """The tests' oracle of equal tables: the same values, in columns of the same dtype."""
    scores = score_span_columns(SpanColumns.of_documents([LETTER]))
    assert same_scores(scores, score_span_columns(SpanColumns.of_documents([LETTER])))
    assert same_scores(scores.take([0]), scores) and not same_scores(scores, scores.take([]))
    assert not same_scores(scores, replace(scores, counts=scores.counts.astype(np.int64)))
