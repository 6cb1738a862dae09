"""EPPI Reviewer exports: code sets define attributes, references carry the coded gold."""

from __future__ import annotations

import json

import pytest

from annotations.importers.eppi import read_eppi_gold
from annotations.importers.errors import InputValidationError
from metrics.engine.attributes.types import AttributeType, FullTextDetail, GoldAnnotation

TYPES = {"101": AttributeType.BOOL, "102": AttributeType.STRING, "103": AttributeType.INTEGER}


def export(references: list, code_sets: list | None = None) -> bytes:
    if code_sets is None:
        code_sets = [
            {
                "SetName": "Extraction",
                "Attributes": {
                    "AttributesList": [
                        {"AttributeId": 101, "AttributeName": "Randomised"},
                        {
                            "AttributeId": 100,
                            "AttributeName": "Population",
                            "Attributes": {
                                "AttributesList": [
                                    {"AttributeId": 102, "AttributeName": "Country"},
                                    {"AttributeId": 103, "AttributeName": "Participants"},
                                ]
                            },
                        },
                    ]
                },
            }
        ]
    return json.dumps({"CodeSets": code_sets, "References": references}, indent=2).encode()


def read(data: bytes):
    return read_eppi_gold(data, name="gold.json", attribute_types=TYPES)


def test_it_reads_documents_codes_and_nested_attribute_names():
    gold = read(
        export(
            [
                {
                    "ItemId": 5001,
                    "Title": "Smith 2020",
                    "Codes": [
                        {"AttributeId": 101, "AdditionalText": "randomised by envelope"},
                        {
                            "AttributeId": 102,
                            "AdditionalText": "Kenya",
                            "ItemAttributeFullTextDetails": [
                                {"ItemDocumentId": 77, "Text": 'Page 2:\n[¬s]"in Kenya"[¬e]', "ItemArm": ""}
                            ],
                        },
                        {"AttributeId": 103, "AdditionalText": "120"},
                    ],
                }
            ]
        )
    )

    (document,) = gold.documents
    assert (document.document_id, document.name, document.external_id) == ("5001", "Smith 2020", "5001")
    assert document.annotations == {
        "101": GoldAnnotation(output_data=True, additional_text="randomised by envelope"),
        "102": GoldAnnotation(
            output_data="Kenya",
            additional_text="Kenya",
            full_text_details=(FullTextDetail(text='Page 2:\n[¬s]"in Kenya"[¬e]', item_document_id="77"),),
        ),
        "103": GoldAnnotation(output_data="120", additional_text="120"),
    }
    assert gold.attribute_names == {
        "101": "Randomised",
        "100": "Population",
        "102": "Country",
        "103": "Participants",
    }
    assert gold.warnings == [] and gold.documents_without_gold == []


def test_a_bool_code_is_true_because_it_exists_even_without_text():
    gold = read(export([{"ItemId": 1, "Title": "A", "Codes": [{"AttributeId": 101}]}]))

    assert gold.documents[0].annotations["101"] == GoldAnnotation(output_data=True)
    # Absent BOOL codes are not written: the engine gives them the BOOL default, False.
    assert "102" not in gold.documents[0].annotations


def test_a_reference_without_codes_is_listed_and_not_scored():
    gold = read(
        export(
            [
                {"ItemId": 1, "Title": "Coded", "Codes": [{"AttributeId": 101}]},
                {"ItemId": 2, "Title": "Not coded yet", "Codes": []},
                {"ItemId": 3, "Title": "No Codes key"},
            ]
        )
    )

    assert gold.documents_without_gold == ["2", "3"]
    # Passed on with no annotations, so predictions for them are accepted and the engine lists them.
    assert gold.document_ids() == ["1", "2", "3"]
    assert [dict(document.annotations) for document in gold.documents[1:]] == [{}, {}]


def test_duplicate_codes_for_one_attribute_are_merged_with_a_warning():
    gold = read(
        export(
            [
                {
                    "ItemId": 9,
                    "Title": "Twice coded",
                    "Codes": [
                        {
                            "AttributeId": 102,
                            "AdditionalText": "Kenya",
                            "ItemAttributeFullTextDetails": [{"ItemDocumentId": 1, "Text": "Page 1: a"}],
                        },
                        {
                            "AttributeId": 102,
                            "AdditionalText": "Uganda",
                            "ItemAttributeFullTextDetails": [{"ItemDocumentId": 1, "Text": "Page 3: b"}],
                        },
                        {"AttributeId": 101},
                        {"AttributeId": 101},
                    ],
                }
            ]
        )
    )

    annotations = gold.documents[0].annotations
    # Differing texts are both kept, so a conflict is visible rather than one value silently chosen.
    assert annotations["102"].output_data == "Kenya\nUganda"
    assert [detail.text for detail in annotations["102"].full_text_details] == ["Page 1: a", "Page 3: b"]
    assert annotations["101"].output_data is True
    assert [(w.document_id, w.field) for w in gold.warnings] == [
        ("9", "References[0].Codes"),
        ("9", "References[0].Codes"),
    ]
    assert "2 codes for attribute 102 (Country) merged into one" in gold.warnings[0].message
    assert "differ" in gold.warnings[0].message
    assert "differ" not in gold.warnings[1].message


def test_a_code_for_an_undefined_attribute_is_kept_with_a_warning():
    gold = read(export([{"ItemId": 1, "Codes": [{"AttributeId": 999, "AdditionalText": "x"}]}]))

    assert gold.documents[0].annotations["999"].output_data == "x"
    assert gold.warnings[0].field == "References[0].Codes[0].AttributeId"


def test_malformed_json_names_the_line():
    with pytest.raises(InputValidationError) as raised:
        read(b'{\n  "References": [\n    {"ItemId": 1,,}\n  ]\n}')

    (problem,) = raised.value.problems
    assert (problem.file, problem.line) == ("gold.json", 3)
    assert "malformed JSON" in problem.message


def test_a_file_that_is_not_utf8_is_an_error():
    with pytest.raises(InputValidationError) as raised:
        read(b'{"References": [\n{"ItemId": 1, "Title": "Caf\xe9"}]}')

    assert raised.value.problems[0].line == 2
    assert "UTF-8" in raised.value.problems[0].message


def test_structural_errors_are_all_reported_with_their_path_and_document():
    with pytest.raises(InputValidationError) as raised:
        read(
            export(
                [
                    {"Title": "no id"},
                    {"ItemId": 2, "Codes": [{"AdditionalText": "no attribute"}]},
                    {"ItemId": 3, "Codes": [{"AttributeId": 102, "AdditionalText": 7}]},
                    {"ItemId": 4, "Codes": "not a list"},
                    {"ItemId": 4, "Codes": []},
                    {
                        "ItemId": 5,
                        "Codes": [{"AttributeId": 102, "ItemAttributeFullTextDetails": [{"Text": 1}]}],
                    },
                ]
            )
        )

    assert [(p.document_id, p.field) for p in raised.value.problems] == [
        (None, "References[0].ItemId"),
        (None, "References[1].Codes[0].AttributeId"),
        ("3", "References[2].Codes[0].AdditionalText"),
        ("4", "References[3].Codes"),
        ("4", "References[4].ItemId"),
        ("5", "References[5].Codes[0].ItemAttributeFullTextDetails[0]"),
    ]
    assert all(p.file == "gold.json" for p in raised.value.problems)
    assert "duplicate ItemId" in raised.value.problems[4].message


def test_an_export_without_references_is_an_error():
    with pytest.raises(InputValidationError) as raised:
        read(b'{"CodeSets": []}')

    assert raised.value.problems[0].field == "References"


def test_a_non_bool_code_without_text_is_null_gold_with_a_warning():
    gold = read(export([{"ItemId": 1, "Codes": [{"AttributeId": 103, "AdditionalText": ""}]}]))

    assert gold.documents[0].annotations["103"].output_data is None
    (warning,) = gold.warnings
    assert "INTEGER attribute 103 (Participants) has no AdditionalText" in warning.message
    assert (warning.document_id, warning.field) == ("1", "References[0].Codes")


def test_an_export_orjson_would_read_differently_is_read_as_json_reads_it():
    # A byte order mark, a 19-digit run (an integer orjson would read as a float) and NaN: each goes
    # to json (the fast path is orjson), so the gold is exactly what it was.
    references = [
        {"ItemId": 12345678901234567890, "Codes": [{"AttributeId": 102, "AdditionalText": "Kenya"}]},
        {"ItemId": 2, "Codes": [{"AttributeId": 103, "AdditionalText": "40"}], "Score": float("nan")},
    ]
    data = export(references)
    plain = read(data)
    assert [document.document_id for document in plain.documents] == ["12345678901234567890", "2"]
    assert read(b"\xef\xbb\xbf" + data).documents == plain.documents


def test_malformed_json_gets_json_s_message():
    with pytest.raises(InputValidationError) as raised:
        read(b'{\n  "References": [\n    {"ItemId": 1,,}\n  ]\n}')

    (problem,) = raised.value.problems
    # The message json gave before orjson read the exports (orjson's own goes unused).
    assert problem.message == "malformed JSON: Expecting property name enclosed in double quotes (column 18)"
