"""The nervaluate family agrees with nervaluate 1.2.1 itself, overall and per type.

nervaluate is called as docs/semantics.md section 1 says: on lists sorted by (start, end, entity_type),
with inclusive end = end - 1. Counts must be equal; precision, recall and f1 must be equal wherever
we define them (where nervaluate returns 0 for a zero denominator we return None instead).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from nervaluate import Evaluator

from metrics.engine.spans.types import DocumentSpans, Span
from tests.engine.spans.results import evaluate_documents

SCHEMAS = ("strict", "exact", "partial", "ent_type")
COUNTS = ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual")
TYPES = ("NAME", "DATE", "ID")


@st.composite
def documents(draw: st.DrawFn, document_id: str) -> DocumentSpans:
    # Long texts now and then, for gold spans over 100 code points (nervaluate's 1% overlap rule).
    length = draw(st.sampled_from([0, 12, 30, 30, 260]))

    def spans() -> list[Span]:
        if not length:
            return []
        found = []
        for _ in range(draw(st.integers(0, 7))):
            start = draw(st.integers(0, length - 1))
            width = draw(st.sampled_from([1, 3, 6, 150]))
            end = min(length, start + draw(st.integers(1, width)))
            found.append(Span(start, end, draw(st.sampled_from(TYPES))))
        return found

    return DocumentSpans(document_id, "x" * length, spans(), spans())


@st.composite
def corpora(draw: st.DrawFn) -> list[DocumentSpans]:
    return [draw(documents(f"doc-{i}")) for i in range(draw(st.integers(1, 4)))]


def nervaluate_input(spans) -> list[dict]:
    ordered = sorted(spans, key=lambda s: (s.start, s.end, s.entity_type))
    return [{"label": s.entity_type, "start": s.start, "end": s.end - 1} for s in ordered]


def assert_agrees(ours: dict, theirs, schema: str) -> None:
    for name in COUNTS:
        assert ours[name] == getattr(theirs, name), (schema, name)
    for name in ("precision", "recall", "f1"):
        if ours[name] is not None:
            assert ours[name] == getattr(theirs, name), (schema, name)
    # Where we say "undefined", nervaluate says 0.
    assert (ours["precision"] is None) == (theirs.actual == 0)
    assert (ours["recall"] is None) == (theirs.possible == 0)


@settings(max_examples=200, deadline=None)
@given(corpora())
def test_counts_and_measures_agree_with_nervaluate_overall_and_per_type(docs):
    results = evaluate_documents(docs)
    true = [nervaluate_input(doc.gold) for doc in docs]
    pred = [nervaluate_input(doc.predicted) for doc in docs]
    theirs = Evaluator(true, pred, tags=list(TYPES), loader="dict").evaluate()
    for schema in SCHEMAS:
        assert_agrees(results["micro"]["nervaluate"][schema], theirs["overall"][schema], schema)
    assert set(results["per_type"]) == set(theirs["entities"])
    for entity_type, by_schema in theirs["entities"].items():
        for schema in SCHEMAS:
            assert_agrees(results["per_type"][entity_type]["nervaluate"][schema], by_schema[schema], schema)


def test_overlapping_predictions_claim_gold_spans_in_list_order_as_nervaluate_does():
    # Two predictions overlap the first gold span: the first in list order claims it (INC, wrong
    # type), so the second, though of the right type and closer, finds nothing left and is spurious.
    gold = [Span(0, 10, "NAME"), Span(12, 20, "NAME")]
    predicted = [Span(0, 4, "DATE"), Span(2, 10, "NAME"), Span(12, 20, "NAME")]
    doc = DocumentSpans("d", "x" * 20, gold, predicted)
    ours = evaluate_documents([doc])["micro"]["nervaluate"]
    theirs = Evaluator([nervaluate_input(gold)], [nervaluate_input(predicted)], list(TYPES), loader="dict")
    overall = theirs.evaluate()["overall"]
    for schema in SCHEMAS:
        assert_agrees(ours[schema], overall[schema], schema)
    assert (ours["strict"]["correct"], ours["strict"]["incorrect"], ours["strict"]["spurious"]) == (1, 1, 1)
    assert (ours["ent_type"]["correct"], ours["ent_type"]["incorrect"], ours["ent_type"]["spurious"]) == (
        1,
        1,
        1,
    )
