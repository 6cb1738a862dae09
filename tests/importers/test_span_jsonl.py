"""JSONL span input: what it reads, and every problem it reports with file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotations.importers.errors import ImportProblem, InputValidationError
from annotations.importers.sources import InMemorySource
from annotations.importers.spans import load_span_corpus
from tests.importers.test_span_fixtures import jsonl_bytes, jsonl_line, write

TEXT = "Patient: Max Mustermann, geb. 01.02.1980"


def problems_of(path: Path, role: str = "gold") -> list[ImportProblem]:
    with pytest.raises(InputValidationError) as raised:
        load_span_corpus(path, role=role)  # type: ignore[arg-type]
    return raised.value.problems


def only_problem(path: Path, role: str = "gold") -> ImportProblem:
    (problem,) = problems_of(path, role)
    return problem


def test_it_reads_documents_spans_and_labels(tmp_path: Path) -> None:
    line = (
        '{"document_id": "doc-001", "text": "Patient: Max Mustermann, geb. 01.02.1980", "entities": '
        '[{"start": 9, "end": 23, "entity_type": "PERSON_NAME", "text": "Max Mustermann"}, '
        '{"start": 30, "end": 40, "entity_type": "dateofbirth"}]}'
    )
    path = write(tmp_path / "gold.jsonl", (line + "\n").encode())
    corpus = load_span_corpus(path)
    (document,) = corpus.documents
    assert (document.document_id, document.text, document.line) == ("doc-001", TEXT, 1)
    assert [(s.start, s.end, s.entity_type, s.label) for s in document.spans] == [
        (9, 23, "PERSON_NAME", "PERSON_NAME"),
        (30, 40, "DATE_OF_BIRTH", "dateofbirth"),
    ]
    assert corpus.warnings == []


def test_offsets_are_code_points(tmp_path: Path) -> None:
    text = "🥳 Frau 👩🏽‍⚕️ Müller"
    start = text.index("Müller")
    path = write(
        tmp_path / "gold.jsonl",
        jsonl_bytes(
            [
                jsonl_line(
                    "d",
                    text,
                    [],
                    entities=[
                        {"start": start, "end": start + 6, "entity_type": "PERSON_NAME", "text": "Müller"}
                    ],
                )
            ]
        ),
    )
    (document,) = load_span_corpus(path).documents
    assert document.text[document.spans[0].start : document.spans[0].end] == "Müller"


def test_an_empty_document_is_valid(tmp_path: Path) -> None:
    path = write(tmp_path / "gold.jsonl", jsonl_bytes([jsonl_line("empty", "", [])]))
    (document,) = load_span_corpus(path).documents
    assert (document.text, document.spans) == ("", [])


def test_blank_lines_and_a_byte_order_mark_are_tolerated(tmp_path: Path) -> None:
    content = "\ufeff" + jsonl_line("a", "x", []) + "\n\n   \n" + jsonl_line("b", "y", []) + "\n"
    path = write(tmp_path / "gold.jsonl", content.encode())
    corpus = load_span_corpus(path)
    assert [(d.document_id, d.line) for d in corpus.documents] == [("a", 1), ("b", 4)]


@pytest.mark.parametrize(
    ("start", "end", "field", "expected"),
    [
        (-1, 3, "start", "negative"),
        (5, 5, "start", "start must be smaller than end"),
        (6, 5, "start", "start must be smaller than end"),
        (30, 41, "end", "reach past the end of the text (40 code points)"),
    ],
)
def test_it_rejects_offsets_out_of_range(
    tmp_path: Path, start: int, end: int, field: str, expected: str
) -> None:
    path = write(tmp_path / "gold.jsonl", jsonl_bytes([jsonl_line("doc-1", TEXT, [(start, end, "AGE")])]))
    problem = only_problem(path)
    assert expected in problem.message
    assert (problem.file, problem.line, problem.document_id, problem.field) == (
        str(path),
        1,
        "doc-1",
        f"entities[0].{field}",
    )
    assert f"{path}:1" in str(problem) and f"entities[0].{field}" in str(problem)


def test_it_rejects_an_entity_text_that_differs_from_the_text_at_its_offsets(tmp_path: Path) -> None:
    entities = [{"start": 8, "end": 22, "entity_type": "PERSON_NAME", "text": "Max Mustermann"}]
    path = write(tmp_path / "gold.jsonl", jsonl_bytes([jsonl_line("doc-1", TEXT, [], entities=entities)]))
    problem = only_problem(path)
    assert (problem.line, problem.field) == (1, "entities[0].text")
    assert "does not match the document text at [8, 22)" in problem.message


def test_it_rejects_duplicate_document_ids_naming_both_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path / "gold.jsonl", jsonl_bytes([jsonl_line("doc-1", "a", []), jsonl_line("doc-1", "b", [])])
    )
    problem = only_problem(path)
    assert (problem.line, problem.document_id, problem.field) == (2, "doc-1", "document_id")
    assert f"first seen at {path}:1" in problem.message


def test_it_rejects_malformed_json_naming_the_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "gold.jsonl", jsonl_bytes([jsonl_line("a", "x", []), '{"document_id": "b", "text": '])
    )
    problem = only_problem(path)
    assert problem.line == 2
    assert problem.message.startswith("malformed JSON")


def test_it_rejects_input_that_is_not_utf8_naming_the_line(tmp_path: Path) -> None:
    latin1 = jsonl_line("b", "Müller", []).encode("latin-1")
    path = write(tmp_path / "gold.jsonl", jsonl_line("a", "x", []).encode() + b"\n" + latin1 + b"\n")
    problem = only_problem(path)
    assert problem.line == 2
    assert "not UTF-8" in problem.message


@pytest.mark.parametrize(
    ("record", "field", "expected"),
    [
        ({"text": "x", "entities": []}, "document_id", "required"),
        ({"document_id": 7, "text": "x", "entities": []}, "document_id", "non-empty string"),
        ({"document_id": "a", "entities": []}, "text", "required"),
        ({"document_id": "a", "text": 3, "entities": []}, "text", "must be a string"),
        ({"document_id": "a", "text": "x"}, "entities", "a list of entities"),
        ({"document_id": "a", "text": "x", "entities": ["PERSON"]}, "entities[0]", "must be an object"),
        (
            {"document_id": "a", "text": "x", "entities": [{"end": 1, "entity_type": "A"}]},
            "entities[0].start",
            "integer",
        ),
        (
            {
                "document_id": "a",
                "text": "xy",
                "entities": [{"start": False, "end": True, "entity_type": "A"}],
            },
            "entities[0].start",
            "integer",
        ),
        (
            {"document_id": "a", "text": "x", "entities": [{"start": 0, "end": 1}]},
            "entities[0].entity_type",
            "string",
        ),
        (
            {
                "document_id": "a",
                "text": "x",
                "entities": [{"start": 0, "end": 1, "entity_type": "A", "text": 1}],
            },
            "entities[0].text",
            "must be a string",
        ),
        ({"document_id": "a", "text": "x", "entities": [], "annotator": ""}, "annotator", "non-empty string"),
        ({"document_id": "a", "text": "x", "entities": [], "annotator": "an\u0000na"}, "annotator", "NUL"),
        (
            {"document_id": "a", "text": "x", "entities": [], "annotator": "a" * 151},
            "annotator",
            "limit is 150",
        ),
    ],
)
def test_it_rejects_missing_or_mistyped_fields(
    tmp_path: Path, record: dict, field: str, expected: str
) -> None:
    path = write(tmp_path / "gold.jsonl", (json.dumps(record) + "\n").encode())
    problem = problems_of(path)[0]
    assert (problem.line, problem.field) == (1, field)
    assert expected in problem.message


def test_it_rejects_a_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path / "gold.jsonl", b"[1, 2]\n")
    assert "expected a JSON object" in only_problem(path).message


def test_it_reports_every_problem_in_one_pass(tmp_path: Path) -> None:
    lines = [
        jsonl_line("ok", "fine", [(0, 4, "AGE")]),
        "{broken",
        jsonl_line("bad-offsets", "abc", [(0, 9, "AGE"), (2, 1, "AGE")]),
        jsonl_line("ok", "duplicate", []),
    ]
    path = write(tmp_path / "gold.jsonl", jsonl_bytes(lines))
    problems = problems_of(path)
    assert [(problem.line, problem.field) for problem in problems] == [
        (2, None),
        (3, "entities[0].end"),
        (3, "entities[1].start"),
        (4, "document_id"),
    ]


def test_predictions_may_omit_the_document_text(tmp_path: Path) -> None:
    path = write(tmp_path / "pred.jsonl", jsonl_bytes([jsonl_line("doc-1", None, [(9, 23, "PERSON_NAME")])]))
    (document,) = load_span_corpus(path, role="predictions").documents
    assert document.text is None
    assert (document.spans[0].start, document.spans[0].end) == (9, 23)


def test_gold_may_not_omit_the_document_text(tmp_path: Path) -> None:
    path = write(tmp_path / "gold.jsonl", jsonl_bytes([jsonl_line("doc-1", None, [])]))
    assert only_problem(path).field == "text"


def test_an_input_without_documents_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "gold.jsonl", b"\n")
    assert "no gold documents found" in only_problem(path).message


def test_uploaded_jsonl_is_read_from_memory() -> None:
    source = InMemorySource("upload.jsonl", jsonl_bytes([jsonl_line("a", "Max", [(0, 3, "name")])]))
    (document,) = load_span_corpus(source).documents
    assert document.source == "upload.jsonl"
    assert document.spans[0].entity_type == "PERSON_NAME"


def test_files_of_other_kinds_are_skipped_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path / "gold.jsonl", jsonl_bytes([jsonl_line("a", "x", [])]))
    write(tmp_path / "notes.txt", b"hello")
    corpus = load_span_corpus(tmp_path)
    assert [document.document_id for document in corpus.documents] == ["a"]
    assert corpus.warnings[0].file == str(tmp_path / "notes.txt")


@pytest.mark.parametrize(
    ("raw_line", "field", "expected"),
    [
        # orjson refuses these lines; json reads them, so they are judged as they always were.
        (b'{"document_id": "a", "text": "x", "entities": [{"start": NaN, "end": 1, "entity_type": "A"}]}',
         "entities[0].start", "got nan"),
        (b'{"document_id": "a", "text": "x", "entities": [{"start": 1e400, "end": 1, "entity_type": "A"}]}',
         "entities[0].start", "got inf"),
        (b'{"document_id": "a", "text": "x", "entities": [{"start": 0, "end": 99999999999999999999, '
         b'"entity_type": "A"}]}',
         "entities[0].end", "reach past the end of the text"),
    ],
)  # fmt: skip
def test_lines_the_fast_parser_refuses_are_read_as_json_reads_them(
    tmp_path: Path, raw_line: bytes, field: str, expected: str
) -> None:
    problem = only_problem(write(tmp_path / "gold.jsonl", raw_line + b"\n"))
    assert (problem.line, problem.field) == (1, field)
    assert expected in problem.message


def test_a_lone_surrogate_escape_is_read_as_json_reads_it(tmp_path: Path) -> None:
    path = write(tmp_path / "gold.jsonl", b'{"document_id": "a\\ud800", "text": "x", "entities": []}\n')
    (document,) = load_span_corpus(path, role="gold").documents
    assert document.document_id == "a\ud800"
