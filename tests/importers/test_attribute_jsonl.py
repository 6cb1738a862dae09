"""Native gold JSONL: one document a line, raw values kept for the engine to coerce."""

from __future__ import annotations

import json

import pytest

from annotations.importers.attribute_jsonl import read_gold_jsonl
from annotations.importers.errors import InputValidationError
from annotations.importers.sources import InMemorySource
from metrics.engine.attributes.types import FullTextDetail, GoldAnnotation


def jsonl(*records) -> bytes:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records).encode() + b"\n"


def read(data: bytes):
    return read_gold_jsonl(data, name="gold.jsonl")


def test_it_reads_documents_with_raw_values_and_citations():
    gold = read(
        jsonl(
            {
                "document_id": "d1",
                "name": "Smith 2020",
                "text": "Full text",
                "attributes": {
                    "a1": {"output_data": "yes"},
                    "a2": {
                        "output_data": "1,250",
                        "additional_text": "1,250 participants",
                        "full_text_details": [
                            {"text": "Page 4: [¬s]1,250[¬e]", "item_document_id": 7, "item_arm": None}
                        ],
                    },
                },
            },
            {"document_id": 42, "attributes": {}},
        )
    )

    first, second = gold.documents
    assert (first.document_id, first.name, first.external_id, first.text) == (
        "d1",
        "Smith 2020",
        "d1",
        "Full text",
    )
    assert first.annotations == {
        "a1": GoldAnnotation(output_data="yes"),
        "a2": GoldAnnotation(
            output_data="1,250",
            additional_text="1,250 participants",
            full_text_details=(FullTextDetail(text="Page 4: [¬s]1,250[¬e]", item_document_id="7"),),
        ),
    }
    assert (second.document_id, second.annotations) == ("42", {})
    assert gold.documents_without_gold == []


def test_it_reads_from_disk_and_skips_blank_lines(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_bytes(b'\n{"document_id": "d1", "attributes": {"a1": {"output_data": null}}}\r\n\n')

    gold = read_gold_jsonl(path)

    assert gold.documents[0].annotations["a1"].output_data is None


def test_every_bad_line_is_reported_with_file_line_and_field():
    with pytest.raises(InputValidationError) as raised:
        read(
            jsonl(
                {"document_id": "d1", "attributes": {}},
                '{"document_id": "d2", ',
                '["not", "an", "object"]',
                {"name": "no id"},
                {"document_id": True},
                {"document_id": "d1"},
                {"document_id": "d3", "attributes": ["a1"]},
                {"document_id": "d4", "attributes": {"a1": "bare value"}},
                {"document_id": "d5", "attributes": {"a1": {"additional_text": "no output_data"}}},
                {"document_id": "d6", "attributes": {"a1": {"output_data": 1, "additional_text": 3}}},
                {
                    "document_id": "d7",
                    "attributes": {"a1": {"output_data": 1, "full_text_details": [{"t": 1}]}},
                },
                {"document_id": "d8", "name": 5},
            )
        )

    assert [(p.file, p.line, p.document_id, p.field) for p in raised.value.problems] == [
        ("gold.jsonl", 2, None, None),
        ("gold.jsonl", 3, None, None),
        ("gold.jsonl", 4, None, "document_id"),
        ("gold.jsonl", 5, None, "document_id"),
        ("gold.jsonl", 6, "d1", "document_id"),
        ("gold.jsonl", 7, "d3", "attributes"),
        ("gold.jsonl", 8, "d4", "attributes.a1"),
        ("gold.jsonl", 9, "d5", "attributes.a1.output_data"),
        ("gold.jsonl", 10, "d6", "attributes.a1.additional_text"),
        ("gold.jsonl", 11, "d7", "attributes.a1.full_text_details[0]"),
        ("gold.jsonl", 12, "d8", "name"),
    ]
    messages = [p.message for p in raised.value.problems]
    assert messages[0].startswith("malformed JSON")
    assert messages[1] == "expected a JSON object, found an array"
    assert messages[2] == "missing document_id"
    assert "first on line 1" in messages[4]


def test_a_line_that_is_not_utf8_is_reported_and_the_others_still_checked():
    data = b'{"document_id": "caf\xe9"}\n{"document_id": 1.5}\n'

    with pytest.raises(InputValidationError) as raised:
        read(data)

    assert [(p.line, p.field) for p in raised.value.problems] == [(1, None), (2, "document_id")]
    assert "UTF-8" in raised.value.problems[0].message


def test_an_upload_held_in_memory_is_named_by_its_upload_name():
    upload = InMemorySource(name="upload.jsonl", data=jsonl({"document_id": "d1", "name": 3}))

    with pytest.raises(InputValidationError) as raised:
        read_gold_jsonl(upload)

    assert (
        str(raised.value)
        == "upload.jsonl:1, document 'd1', field 'name': must be a string or null, found a number"
    )
