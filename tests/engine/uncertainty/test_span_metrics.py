"""Span metrics for intervals and comparisons: the same numbers as results.json, from the span
engine's per-document count table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.engine.spans.types import DocumentSpans, Span
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.paired import compare_runs
from metrics.engine.uncertainty.span_metrics import (
    span_document_counts,
    span_metric_definitions,
)
from tests.engine.spans.oracle import document_count_table, score_document
from tests.engine.spans.results import evaluate_documents

TEXT = "Patient: Max Mustermann, geb. 01.02.1980, Tel. 0761 123456, Station 4B"
NAME, BIRTH, PHONE = Span(9, 23, "PERSON_NAME"), Span(30, 40, "DATE_OF_BIRTH"), Span(47, 58, "PHONE")


def documents() -> list[DocumentSpans]:
    return [
        DocumentSpans("d1", TEXT, [NAME, BIRTH, PHONE], [NAME, BIRTH, PHONE]),
        DocumentSpans(
            "d2", TEXT, [NAME, BIRTH, PHONE], [Span(13, 23, "PERSON_NAME"), Span(30, 40, "OTHER_DATE")]
        ),
        DocumentSpans("d3", TEXT, [NAME, PHONE], [Span(0, 7, "OTHER_PII"), Span(47, 52, "PHONE")]),
        DocumentSpans("d4", TEXT, [], [Span(60, 67, "ORGANIZATION")]),
        DocumentSpans("d5", TEXT, [BIRTH], []),
    ]


def results_value(results: dict, path: str):
    node = results
    for key in path.split("."):
        node = node[key]
    return node


def test_every_metric_equals_the_value_results_json_reports():
    docs = documents()
    results = evaluate_documents(docs)
    counts = span_document_counts(document_count_table(score_document(doc) for doc in docs))
    definitions = span_metric_definitions(counts.columns)
    totals = counts.totals()
    for name, definition in definitions.items():
        ours = definition.measure(totals)[0]
        theirs = results_value(results, name)
        if theirs is None:
            assert math.isnan(ours), name
        else:
            assert ours == pytest.approx(theirs, abs=1e-12), name
    assert {
        "micro.chars.all.recall",
        "micro.nervaluate.partial.f1",
        "micro.spans_overlap.type_agnostic.recall",
        "per_type.PHONE.chars_typed.recall",
        "leakage.entity_missed.rate_documents_with_gold",
    } <= set(definitions)


def test_char_recall_is_defined_only_where_the_table_holds_its_numerator():
    columns = [
        "chars_typed.AGE.tp",
        "chars_typed.AGE.fn",
        "chars_typed.AGE.covered_by_any",
        "chars_typed.PHONE.tp",
    ]
    definitions = span_metric_definitions(columns)
    assert "per_type.AGE.char_recall" in definitions
    assert "per_type.PHONE.char_recall" not in definitions
    assert definitions["per_type.PHONE.chars_typed.recall"].family == "per_type.chars_typed.recall"
    counts = DocumentCounts(
        ["a", "b"],
        {
            "chars_typed.AGE.covered_by_any": [3, 2],
            "chars_typed.AGE.tp": [2, 2],
            "chars_typed.AGE.fn": [2, 0],
        },
    )
    assert definitions["per_type.AGE.char_recall"].measure(counts.totals())[0] == 5 / 6


def test_a_leakage_comparison_is_a_mcnemar_test_on_documents():
    ids = [f"d{i}" for i in range(20)]
    leaked_a = np.array([1] * 8 + [0] * 12)
    leaked_b = np.array([0] * 6 + [1] * 2 + [0] * 12)  # six documents fixed, none broken
    columns = {"documents": np.ones(20), "documents_with_gold": np.ones(20)}
    a = DocumentCounts(ids, {**columns, "leakage.any_char.leaked": leaked_a})
    b = DocumentCounts(ids, {**columns, "leakage.any_char.leaked": leaked_b})
    definitions = {name: value for name, value in span_metric_definitions([]).items() if "any_char." in name}
    comparison = compare_runs(a, b, definitions)
    result = comparison.metrics["leakage.any_char.rate_all_documents"]
    assert (result.a, result.b, result.delta) == (0.4, 0.1, pytest.approx(-0.3))
    assert result.p_value == pytest.approx(2 / 64)  # 6 discordant documents, all one way
    assert comparison.as_dict()["p_value_methods"]["leakage.any_char.rate_all_documents"] == "mcnemar_exact"
