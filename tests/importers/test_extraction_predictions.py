"""Prediction JSONL: what the model read and returned for each document of a run."""

from __future__ import annotations

import json

import pytest

from annotations.importers.errors import InputValidationError
from annotations.importers.extraction_predictions import read_predictions_jsonl
from metrics.engine.attributes.types import PredictedAnnotation, PredictionDocument


def jsonl(*records) -> bytes:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records).encode() + b"\n"


def read(data: bytes, gold=("d1", "d2", "d3")):
    return read_predictions_jsonl(data, name="llm.jsonl", gold_document_ids=set(gold))


def test_it_reads_each_document_with_its_annotations_and_costs():
    predictions = read(
        jsonl(
            {
                "document_id": "d1",
                "context": "120 participants in Kenya",
                "annotations": [
                    {
                        "attribute_id": "a1",
                        "output_data": 120,
                        "additional_text": "120 participants",
                        "reasoning": "r",
                    },
                    {"attribute_id": 103, "output_data": None},
                ],
                "input_tokens": 900,
                "output_tokens": 40,
                "cost_usd": 0.002,
                "timings": {"llm_call_seconds": 1.5, "parsing_seconds": 0},
            },
            {"document_id": "d2", "status": "failed", "error": "timeout"},
        )
    )

    assert list(predictions.documents) == ["d1", "d2"]
    assert predictions.documents["d1"] == PredictionDocument(
        document_id="d1",
        context="120 participants in Kenya",
        annotations=(
            PredictedAnnotation("a1", 120, additional_text="120 participants", reasoning="r"),
            PredictedAnnotation("103", None),
        ),
        input_tokens=900,
        output_tokens=40,
        cost_usd=0.002,
        timings={"llm_call_seconds": 1.5, "parsing_seconds": 0.0},
    )
    assert predictions.documents["d2"] == PredictionDocument(
        document_id="d2", status="failed", error="timeout"
    )


def test_two_annotations_for_one_attribute_are_both_passed_on_for_the_engine_to_judge():
    predictions = read(
        jsonl(
            {
                "document_id": "d1",
                "context": "",
                "annotations": [
                    {"attribute_id": "a1", "output_data": 1},
                    {"attribute_id": "a1", "output_data": 2},
                ],
            }
        )
    )

    assert [a.output_data for a in predictions.documents["d1"].annotations] == [1, 2]


def test_unknown_fields_are_warned_about_once_and_ignored():
    predictions = read(
        jsonl(
            {"document_id": "d1", "context": "", "model": "x"},
            {"document_id": "d2", "context": "", "model": "x"},
        )
    )

    (warning,) = predictions.warnings
    assert (warning.line, warning.field) == (1, "model")


def test_every_bad_line_is_reported_with_file_line_and_field():
    with pytest.raises(InputValidationError) as raised:
        read(
            jsonl(
                '{"document_id": "d1", "context": "x"',
                {"context": "no id"},
                {"document_id": "d1", "context": 3},
                {"document_id": "d1", "context": "again"},
                {"document_id": "elsewhere", "context": ""},
                {"document_id": "d3", "context": "", "status": "done", "input_tokens": "12", "cost_usd": -1},
            )
        )

    assert [(p.file, p.line, p.document_id, p.field) for p in raised.value.problems] == [
        ("llm.jsonl", 1, None, None),
        ("llm.jsonl", 2, None, "document_id"),
        ("llm.jsonl", 3, "d1", "context"),
        ("llm.jsonl", 4, "d1", "document_id"),
        ("llm.jsonl", 5, "elsewhere", "document_id"),
        ("llm.jsonl", 6, "d3", "status"),
        ("llm.jsonl", 6, "d3", "input_tokens"),
        ("llm.jsonl", 6, "d3", "cost_usd"),
    ]
    messages = [p.message for p in raised.value.problems]
    assert messages[0].startswith("malformed JSON")
    assert "duplicate line for this document (first on line 3)" in messages[3]
    assert messages[4] == "prediction for a document that is not in the gold"


def test_wrong_annotation_and_timing_types_name_their_field():
    with pytest.raises(InputValidationError) as raised:
        read(
            jsonl(
                {
                    "document_id": "d1",
                    "context": "",
                    "annotations": [
                        "a1",
                        {"output_data": 1},
                        {"attribute_id": "a2"},
                        {"attribute_id": "a3", "output_data": 1, "reasoning": ["r"]},
                    ],
                    "timings": {"llm_call_seconds": "slow"},
                },
                {"document_id": "d2", "context": "", "annotations": {"a1": 1}, "timings": [1]},
            )
        )

    assert [(p.line, p.field) for p in raised.value.problems] == [
        (1, "timings.llm_call_seconds"),
        (1, "annotations[0]"),
        (1, "annotations[1].attribute_id"),
        (1, "annotations[2].output_data"),
        (1, "annotations[3].reasoning"),
        (2, "timings"),
        (2, "annotations"),
    ]


def test_a_line_that_is_not_utf8_is_an_error_naming_it():
    with pytest.raises(InputValidationError) as raised:
        read(b'{"document_id": "d1", "context": ""}\n{"document_id": "d2", "context": "caf\xe9"}\n')

    (problem,) = raised.value.problems
    assert (problem.file, problem.line) == ("llm.jsonl", 2)
    assert "UTF-8" in problem.message


def test_without_a_gold_list_any_document_is_accepted(tmp_path):
    path = tmp_path / "llm.jsonl"
    path.write_bytes(jsonl({"document_id": "anything", "context": "c"}))

    assert list(read_predictions_jsonl(path).documents) == ["anything"]


def test_values_orjson_reads_differently_are_read_as_json_reads_them():
    # orjson (the fast path) refuses NaN and lone surrogates and would read a 20-digit integer as a
    # float: such lines go to json, so the values are exactly json's.
    lines = [
        '{"document_id": "d1", "context": "c", "annotations": [{"attribute_id": "a", "output_data": NaN}]}',
        '{"document_id": "d2", "context": "c", "annotations": [{"attribute_id": "a", "output_data": 123456789012345678901}]}',
        '{"document_id": "d3", "context": "c\\ud800", "annotations": [{"attribute_id": "a", "output_data": -1e400}]}',
    ]
    documents = read("\n".join(lines).encode()).documents
    values = [document.annotations[0].output_data for document in documents.values()]
    assert repr(values) == repr([json.loads(line)["annotations"][0]["output_data"] for line in lines])
    assert type(values[1]) is int
    assert documents["d3"].context == "c\ud800"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        # The messages json gave before orjson read the lines (orjson's own go unused).
        (
            b'{"document_id": "d1", "context": "c",}',
            "malformed JSON: Expecting property name enclosed in double quotes (column 38)",
        ),
        (b'{"document_id": "d1", "context": "c"', "malformed JSON: Expecting ',' delimiter (column 1)"),
        (
            b'{"document_id": "d1", "context": "c\x01"}',
            "malformed JSON: Invalid control character at (column 36)",
        ),
        (b"\xef\xbb\xbf{}", "malformed JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) (column 1)"),
        (b"[1, 2]", "expected a JSON object, found an array"),
        (b'{"document_id": "d1" "context": 1}', "malformed JSON: Expecting ',' delimiter (column 22)"),
    ],
)
def test_malformed_lines_get_json_s_messages(line, message):
    with pytest.raises(InputValidationError) as raised:
        read(b'{"document_id": "d2", "context": "c"}\n' + line + b"\n")
    assert [(problem.line, problem.message) for problem in raised.value.problems] == [(2, message)]
