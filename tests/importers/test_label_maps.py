"""Label maps: default labels, user maps merged over them, unknown labels (docs/semantics.md section 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotations.importers.errors import InputValidationError
from annotations.importers.labels import (
    CANONICAL_TYPES,
    LabelMap,
    LabelResolver,
    load_label_map,
    parse_label_map,
)
from annotations.importers.spans import load_span_corpus
from tests.importers.test_span_fixtures import jsonl_bytes, jsonl_line, write


def test_there_are_twelve_canonical_types() -> None:
    assert len(CANONICAL_TYPES) == 12
    assert "OTHER_PII" in CANONICAL_TYPES


def test_the_default_map_knows_the_annotation_workflows_labels() -> None:
    label_map = LabelMap.default()
    assert label_map.lookup("patientname") == "PERSON_NAME"
    assert label_map.lookup("firstname") == "PERSON_NAME"
    assert label_map.lookup("lastname") == "PERSON_NAME"
    assert label_map.lookup("name") == "PERSON_NAME"
    assert label_map.lookup("patientid") == "ID_NUMBER"
    assert label_map.lookup("dateofbirth") == "DATE_OF_BIRTH"
    assert label_map.lookup("age") == "AGE"
    assert label_map.lookup("patientgender") == "OTHER_PII"
    assert label_map.lookup("sex") == "OTHER_PII"


def test_lookup_ignores_case_and_surrounding_whitespace() -> None:
    label_map = LabelMap.default()
    assert label_map.lookup("  PatientName ") == "PERSON_NAME"
    assert label_map.lookup("person_name") == "PERSON_NAME"
    assert label_map.lookup("Email") == "EMAIL"


def test_every_canonical_name_maps_to_itself() -> None:
    label_map = LabelMap.default()
    assert all(label_map.lookup(canonical) == canonical for canonical in CANONICAL_TYPES)


def test_a_user_map_is_merged_over_the_default(tmp_path: Path) -> None:
    path = write(tmp_path / "map.json", b'{"Klinik": "organization", "age": "OTHER_PII"}')
    label_map = load_label_map(path)
    assert label_map.lookup("klinik") == "ORGANIZATION"
    assert label_map.lookup("AGE") == "OTHER_PII"
    assert label_map.lookup("patientname") == "PERSON_NAME"


def test_no_map_path_gives_the_default_map() -> None:
    assert load_label_map(None) == LabelMap.default()


def test_it_rejects_targets_that_are_not_canonical_types_naming_each_label(tmp_path: Path) -> None:
    path = write(tmp_path / "map.json", b'{"klinik": "HOSPITAL", "fallnummer": 3, "arzt": "PERSON_NAME"}')
    with pytest.raises(InputValidationError) as raised:
        load_label_map(path)
    problems = raised.value.problems
    assert [problem.field for problem in problems] == ["klinik", "fallnummer"]
    assert all(problem.file == str(path) for problem in problems)
    assert "HOSPITAL" in str(raised.value)


def test_it_rejects_a_map_that_is_not_a_json_object() -> None:
    with pytest.raises(InputValidationError, match="must be a JSON object"):
        parse_label_map(b'["klinik"]', source="map.json")


def test_it_rejects_malformed_json_in_a_map() -> None:
    with pytest.raises(InputValidationError, match=r"map\.json: malformed JSON"):
        parse_label_map(b'{"klinik": ', source="map.json")


def test_it_reports_a_missing_map_file(tmp_path: Path) -> None:
    with pytest.raises(InputValidationError, match="cannot read label map"):
        load_label_map(tmp_path / "absent.json")


def test_unknown_labels_become_other_pii_and_keep_their_raw_label() -> None:
    resolver = LabelResolver(LabelMap.default())
    canonical, raw_label, unknown = resolver.resolve("Fallnummer", "doc-1")
    assert (canonical, raw_label, unknown) == ("OTHER_PII", "Fallnummer", True)


def test_one_warning_per_distinct_unknown_label_lists_its_documents(tmp_path: Path) -> None:
    gold = write(
        tmp_path / "gold.jsonl",
        jsonl_bytes(
            [
                jsonl_line("doc-1", "Klinik Nord, Fall 77", [(0, 11, "Klinik"), (18, 20, "Fallnummer")]),
                jsonl_line("doc-2", "Klinik Süd", [(0, 10, "Klinik")]),
                jsonl_line("doc-3", "Klinik Ost", [(0, 10, "Klinik"), (0, 6, "Klinik")]),
                jsonl_line("doc-4", "Max", [(0, 3, "patientname")]),
            ]
        ),
    )
    corpus = load_span_corpus(gold)
    warnings = {warning.message.split("'")[1]: warning for warning in corpus.warnings}
    assert sorted(warnings) == ["Fallnummer", "Klinik"]
    assert warnings["Klinik"].documents == ("doc-1", "doc-2", "doc-3")
    assert "3 documents" in warnings["Klinik"].message
    assert warnings["Fallnummer"].documents == ("doc-1",)
    assert warnings["Klinik"].as_dict()["documents"] == ["doc-1", "doc-2", "doc-3"]
    spans = corpus.documents[0].spans
    assert [(span.entity_type, span.label) for span in spans] == [
        ("OTHER_PII", "Klinik"),
        ("OTHER_PII", "Fallnummer"),
    ]


def test_a_label_mapped_by_the_user_map_gives_no_warning(tmp_path: Path) -> None:
    gold = write(
        tmp_path / "gold.jsonl", jsonl_bytes([jsonl_line("doc-1", "Klinik Nord", [(0, 11, "Klinik")])])
    )
    label_map = parse_label_map(b'{"klinik": "ORGANIZATION"}')
    corpus = load_span_corpus(gold, label_map=label_map)
    assert corpus.warnings == []
    span = corpus.documents[0].spans[0]
    assert (span.entity_type, span.label) == ("ORGANIZATION", "Klinik")


def test_a_warning_message_names_only_the_first_documents_but_keeps_them_all() -> None:
    resolver = LabelResolver(LabelMap.default(), input_name="gold.jsonl")
    for number in range(25):
        resolver.resolve("Station", f"doc-{number}")
    (warning,) = resolver.warnings()
    assert "and 15 more" in warning.message
    assert len(warning.documents) == 25
    assert warning.file == "gold.jsonl"
