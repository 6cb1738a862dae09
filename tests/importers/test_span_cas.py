"""UIMA CAS JSON (INCEpTION): text from the Sofa, offsets converted from UTF-16 (or UTF-8/UTF-32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotations.importers.errors import ImportProblem, InputValidationError, ProblemCollector
from annotations.importers.spans import load_span_corpus
from annotations.importers.uima_cas import OffsetConverter, parse_cas_json, span_label
from tests.importers.test_span_fixtures import cas_json, encoded_offset, write

DATA = Path(__file__).resolve().parent.parent / "data" / "uima"
EMOJI_TEXT = "🥳 Frau 👩🏽‍⚕️ Müller, geb. 01.02.1980 ✆ 0171"


def spans_of(path: Path) -> list[tuple[int, int, str, str, str]]:
    (document,) = load_span_corpus(path).documents
    assert document.text is not None
    return [(s.start, s.end, s.entity_type, s.label, document.text[s.start : s.end]) for s in document.spans]


def problems_of(path: Path) -> list[ImportProblem]:
    with pytest.raises(InputValidationError) as raised:
        load_span_corpus(path)
    return raised.value.problems


def emoji_spans() -> list[tuple[int, int, str]]:
    name = EMOJI_TEXT.index("Müller")
    date = EMOJI_TEXT.index("01.02.1980")
    return [(name, name + 6, "PatientName"), (date, date + 10, "DateOfBirth")]


EXPECTED_EMOJI_SPANS = [
    (EMOJI_TEXT.index("Müller"), EMOJI_TEXT.index("Müller") + 6, "PERSON_NAME", "PatientName", "Müller"),
    (
        EMOJI_TEXT.index("01.02.1980"),
        EMOJI_TEXT.index("01.02.1980") + 10,
        "DATE_OF_BIRTH",
        "DateOfBirth",
        "01.02.1980",
    ),
]


def test_the_uima_reference_file_parses_to_the_expected_code_points() -> None:
    raw = (DATA / "uima_casWithEmojiUnicodeTextAndAnnotations.json").read_bytes()
    expected = json.loads((DATA / "expected_codepoints.json").read_text(encoding="utf-8"))
    problems = ProblemCollector()
    cas = parse_cas_json(raw, source="reference", problems=problems)
    assert problems.errors == []
    assert cas is not None
    assert len(cas.text) == expected["sofa_codepoints"]
    assert cas.offset_encoding == "UTF-16"
    parsed = sorted((a.type_name, a.begin, a.end, cas.text[a.begin : a.end]) for a in cas.annotations)
    wanted = sorted(
        (a["type"], a["codepoint_begin"], a["codepoint_end"], a["text"]) for a in expected["annotations"]
    )
    assert parsed == wanted


def test_it_reads_custom_spans_with_utf16_offsets(tmp_path: Path) -> None:
    path = write(tmp_path / "doc-1.json", cas_json(EMOJI_TEXT, emoji_spans()))
    assert spans_of(path) == EXPECTED_EMOJI_SPANS


def test_the_document_id_of_a_single_cas_file_is_its_name(tmp_path: Path) -> None:
    path = write(tmp_path / "letter-7.json", cas_json("Max", [(0, 3, "name")]))
    (document,) = load_span_corpus(path).documents
    assert (document.document_id, document.annotator) == ("letter-7", None)


@pytest.mark.parametrize("encoding", ["UTF-8", "UTF-16", "UTF-32"])
def test_it_honours_the_headers_offset_encoding(tmp_path: Path, encoding: str) -> None:
    path = write(tmp_path / "doc-1.json", cas_json(EMOJI_TEXT, emoji_spans(), encoding=encoding))
    assert spans_of(path) == EXPECTED_EMOJI_SPANS


def test_it_resolves_a_sofa_that_comes_after_the_annotations(tmp_path: Path) -> None:
    path = write(tmp_path / "doc-1.json", cas_json(EMOJI_TEXT, emoji_spans(), sofa_last=True))
    assert spans_of(path) == EXPECTED_EMOJI_SPANS


def test_it_reads_feature_structures_keyed_by_id(tmp_path: Path) -> None:
    path = write(tmp_path / "doc-1.json", cas_json(EMOJI_TEXT, emoji_spans(), structures_as_object=True))
    assert spans_of(path) == EXPECTED_EMOJI_SPANS


def test_it_reads_webanno_custom_span_layers(tmp_path: Path) -> None:
    path = write(tmp_path / "doc-1.json", cas_json(EMOJI_TEXT, emoji_spans(), span_type="webanno.custom.PHI"))
    assert spans_of(path) == EXPECTED_EMOJI_SPANS


def test_it_ignores_annotations_that_are_not_span_layers(tmp_path: Path) -> None:
    path = write(tmp_path / "doc-1.json", cas_json("Max", [(0, 3, "name")], span_type="uima.tcas.Annotation"))
    (document,) = load_span_corpus(path).documents
    assert document.spans == []


def test_an_offset_inside_a_surrogate_pair_is_an_error_for_that_span(tmp_path: Path) -> None:
    # "🥳" takes UTF-16 units 0 and 1; unit 1 is its second half.
    raw = cas_json("🥳 Max", [(0, 1, "AGE"), (2, 5, "name")], raw_offsets=[(1, 2), (3, 6)])
    path = write(tmp_path / "doc-1.json", raw)
    (problem,) = problems_of(path)
    assert "begin 1 falls inside a character" in problem.message
    assert (problem.file, problem.document_id, problem.field) == (str(path), "doc-1", "begin")
    assert "custom.Span 10" in problem.message


def test_an_offset_inside_a_utf8_sequence_is_an_error(tmp_path: Path) -> None:
    raw = cas_json("Müller", [(0, 2, "name")], encoding="UTF-8", raw_offsets=[(0, 2)])
    (problem,) = problems_of(write(tmp_path / "doc-1.json", raw))
    assert "end 2 falls inside a character" in problem.message
    assert problem.field == "end"


def test_it_rejects_offsets_past_the_end(tmp_path: Path) -> None:
    raw = cas_json("🥳 Max", [(2, 5, "name")], raw_offsets=[(3, 7)])
    (problem,) = problems_of(write(tmp_path / "doc-1.json", raw))
    assert "end 7 is outside the text (0..6 code units)" in problem.message


def test_it_rejects_empty_and_reversed_spans(tmp_path: Path) -> None:
    raw = cas_json("Max Muster", [(0, 3, "name"), (4, 10, "name")], raw_offsets=[(2, 2), (9, 4)])
    problems = problems_of(write(tmp_path / "doc-1.json", raw))
    assert ["empty span" in p.message or "after end" in p.message for p in problems] == [True, True]


def test_it_rejects_the_legacy_context_views_format_clearly(tmp_path: Path) -> None:
    legacy = {"_context": {"_types": {}}, "_views": {"_InitialView": {}}, "_referenced_fss": {}}
    (problem,) = problems_of(write(tmp_path / "old.json", json.dumps(legacy).encode()))
    assert "legacy UIMA JSON (with _context/_views) is not supported" in problem.message
    assert problem.file == str(tmp_path / "old.json")


def test_it_rejects_an_unknown_offset_encoding(tmp_path: Path) -> None:
    raw = json.loads(cas_json("Max", [], encoding="UTF-16"))
    raw["%HEADER"]["offset-encoding"] = "LATIN-1"
    (problem,) = problems_of(write(tmp_path / "doc-1.json", json.dumps(raw).encode()))
    assert problem.field == "%HEADER.offset-encoding"


def test_it_rejects_a_cas_without_a_sofa(tmp_path: Path) -> None:
    raw = json.loads(cas_json("Max", []))
    raw["%FEATURE_STRUCTURES"] = [fs for fs in raw["%FEATURE_STRUCTURES"] if fs["%TYPE"] != "uima.cas.Sofa"]
    (problem,) = problems_of(write(tmp_path / "doc-1.json", json.dumps(raw).encode()))
    assert "no uima.cas.Sofa" in problem.message


def test_it_rejects_malformed_json_and_non_utf8_files(tmp_path: Path) -> None:
    write(tmp_path / "broken.json", b'{"%FEATURE_STRUCTURES": [')
    write(tmp_path / "latin1.json", cas_json("Max", []).replace(b"Max", "Mäx".encode("latin-1")))
    problems = problems_of(tmp_path)
    assert [(p.file, p.message.split(" (")[0]) for p in problems] == [
        (str(tmp_path / "broken.json"), "malformed JSON: Expecting value"),
        (str(tmp_path / "latin1.json"), "not UTF-8"),
    ]


def test_a_span_without_a_label_feature_uses_value_then_the_layer_name() -> None:
    problems = ProblemCollector()
    raw = json.loads(
        cas_json("Max Muster", [(0, 3, "x"), (4, 10, "y")], span_type="webanno.custom.PatientName")
    )
    spans = [fs for fs in raw["%FEATURE_STRUCTURES"] if fs["%TYPE"] == "webanno.custom.PatientName"]
    del spans[0]["label"]
    spans[1]["value"] = spans[1].pop("label")
    cas = parse_cas_json(json.dumps(raw).encode(), source="x", problems=problems)
    assert cas is not None
    labels = [span_label(a) for a in cas.annotations if a.type_name == "webanno.custom.PatientName"]
    assert labels == ["PatientName", "y"]


@pytest.mark.parametrize("encoding", ["UTF-8", "UTF-16", "UTF-32"])
def test_offset_conversion_round_trips_every_character_boundary(encoding: str) -> None:
    converter = OffsetConverter(EMOJI_TEXT, encoding)
    for position in range(len(EMOJI_TEXT) + 1):
        assert converter.to_code_point(encoded_offset(EMOJI_TEXT, position, encoding)) == position


def test_a_jsonl_document_saved_as_json_gets_a_hint(tmp_path: Path) -> None:
    path = write(tmp_path / "doc-1.json", b'{"document_id": "doc-1", "text": "Max", "entities": []}')
    (problem,) = problems_of(path)
    assert "name the file .jsonl" in problem.message


@given(text=st.text(max_size=40), encoding=st.sampled_from(["UTF-8", "UTF-16", "UTF-32"]))
def test_offset_conversion_maps_every_boundary_back_and_rejects_the_rest(text: str, encoding: str) -> None:
    converter = OffsetConverter(text, encoding)
    boundaries = {encoded_offset(text, position, encoding): position for position in range(len(text) + 1)}
    assert converter.unit_length == encoded_offset(text, len(text), encoding)
    for offset in range(converter.unit_length + 1):
        assert converter.to_code_point(offset) == boundaries.get(offset)
