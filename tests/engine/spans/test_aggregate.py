"""aggregate's per_document rows: sorted by document id, each with its own leakage and leaked text."""

from __future__ import annotations

from metrics.engine.spans.types import DocumentSpans, Span
from tests.engine.spans.results import evaluate_documents

TEXT = "Patient: Max Mustermann, geb. 01.02.1980"
NAME = Span(9, 23, "PERSON_NAME")  # "Max Mustermann"
BIRTH = Span(30, 40, "DATE_OF_BIRTH")  # "01.02.1980"


def per_document(include_sensitive_text: bool) -> list[dict]:
    docs = [  # read in the reverse order of their ids
        DocumentSpans("d3", TEXT, [NAME, BIRTH], [NAME]),
        DocumentSpans("d2", TEXT, [NAME], [Span(9, 12, "PERSON_NAME")]),
        DocumentSpans("d1", TEXT, [NAME], [NAME]),
    ]
    return evaluate_documents(docs, include_sensitive_text=include_sensitive_text)["per_document"]


def test_rows_are_sorted_by_document_id_and_carry_their_own_counts():
    rows = per_document(include_sensitive_text=False)
    assert [row["document_id"] for row in rows] == ["d1", "d2", "d3"]
    assert [(row["gold_spans"], row["predicted_spans"], row["characters"]) for row in rows] == [
        (1, 1, 40),
        (1, 1, 40),
        (2, 1, 40),
    ]
    assert [row["chars_all"] for row in rows] == [
        {"tp": 14, "fp": 0, "fn": 0, "tn": 26},
        {"tp": 3, "fp": 0, "fn": 11, "tn": 26},
        {"tp": 14, "fp": 0, "fn": 10, "tn": 16},
    ]


def test_leaked_lists_the_conditions_each_document_meets_in_their_fixed_order():
    rows = per_document(include_sensitive_text=False)
    assert [row["leaked"] for row in rows] == [
        [],
        ["any_char", "any_char_scored"],
        ["any_char", "any_char_scored", "entity_missed"],
    ]
    assert all("leaked_spans" not in row for row in rows)


def test_leaked_text_goes_to_the_leaking_document_whatever_the_reading_order():
    rows = per_document(include_sensitive_text=True)
    assert "leaked_spans" not in rows[0]
    assert [span["text"] for span in rows[1]["leaked_spans"]] == ["Max Mustermann"]
    assert [span["text"] for span in rows[2]["leaked_spans"]] == ["01.02.1980"]
    assert list(rows[2]) == [
        "document_id",
        "gold_spans",
        "predicted_spans",
        "characters",
        "chars_all",
        "chars_scored",
        "leaked",
        "leaked_spans",
    ]
