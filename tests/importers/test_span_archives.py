"""Archives and INCEpTION project exports read to the same documents as the equivalent JSONL."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from annotations.importers.errors import InputValidationError
from annotations.importers.sources import ArchiveLimits, InMemorySource
from annotations.importers.span_types import SpanCorpus
from annotations.importers.spans import load_span_corpus, select_annotator
from tests.importers.test_span_fixtures import cas_json, jsonl_bytes, jsonl_line, write, zip_bytes

# Texts with astral characters, so that UTF-16 offsets and code points differ.
DOCUMENTS = {
    "arztbrief-1": (
        "Sehr geehrte Frau 👩🏽‍⚕️ Dr. Weiß, Pat. Max Müller 🥳 geb. 01.02.1980",
        ["Weiß", "Max Müller"],
    ),
    "befund-2": ("Befund 🧔🏾‍♂️ für Erika Mustermann, Tel. 0171 234 ✆", ["Erika Mustermann", "0171 234"]),
    "leer-3": ("", []),
}
LABELS = {
    "Weiß": "lastname",
    "Max Müller": "PatientName",
    "Erika Mustermann": "patientname",
    "0171 234": "PHONE",
}


def spans_for(text: str, needles: list[str]) -> list[tuple[int, int, str]]:
    return [(text.index(needle), text.index(needle) + len(needle), LABELS[needle]) for needle in needles]


def as_comparable(corpus: SpanCorpus) -> dict[str, tuple[str | None, list[tuple[int, int, str, str]]]]:
    return {
        document.document_id: (
            document.text,
            [(span.start, span.end, span.entity_type, span.label) for span in document.spans],
        )
        for document in corpus.documents
    }


def export_zip(annotators: tuple[str, ...] = ("alice",)) -> bytes:
    """An INCEpTION project export, zipped on a Mac: nested folders, `__MACOSX/._*` twins, metadata."""
    members: dict[str, bytes] = {"projekt/exportedproject.json": b'{"name": "deid"}'}
    for document_id, (text, needles) in DOCUMENTS.items():
        folder = f"projekt/annotation/{document_id}.txt"
        members[f"projekt/source/{document_id}.txt"] = text.encode()
        members[f"{folder}/INITIAL_CAS.json"] = cas_json(text, [])
        for annotator in annotators:
            members[f"{folder}/{annotator}.json"] = cas_json(text, spans_for(text, needles), sofa_last=True)
            members[f"__MACOSX/{folder}/._{annotator}.json"] = b"\x00\x05\x16\x07 resource fork"
    return zip_bytes(members)


def equivalent_jsonl() -> bytes:
    return jsonl_bytes(
        [
            jsonl_line(document_id, text, spans_for(text, needles))
            for document_id, (text, needles) in DOCUMENTS.items()
        ]
    )


def test_a_zipped_project_export_reads_like_the_equivalent_jsonl(tmp_path: Path) -> None:
    archive = write(tmp_path / "export.zip", export_zip())
    jsonl = write(tmp_path / "gold.jsonl", equivalent_jsonl())
    from_zip = load_span_corpus(archive)
    from_jsonl = load_span_corpus(jsonl)
    assert as_comparable(from_zip) == as_comparable(from_jsonl)
    assert {document.annotator for document in from_zip.documents} == {"alice"}
    assert from_zip.warnings == [] and from_jsonl.warnings == []


def test_an_unpacked_export_directory_reads_like_the_zip(tmp_path: Path) -> None:
    archive = write(tmp_path / "export.zip", export_zip())
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(tmp_path / "unpacked")
    assert as_comparable(load_span_corpus(tmp_path / "unpacked")) == as_comparable(load_span_corpus(archive))


def test_an_uploaded_export_reads_like_the_file() -> None:
    corpus = load_span_corpus(InMemorySource("upload.zip", export_zip()))
    assert sorted(as_comparable(corpus)) == sorted(DOCUMENTS)


def test_a_zip_of_jsonl_files_in_nested_folders_reads_like_one_file(tmp_path: Path) -> None:
    lines = [
        jsonl_line(document_id, text, spans_for(text, needles))
        for document_id, (text, needles) in DOCUMENTS.items()
    ]
    archive = write(
        tmp_path / "gold.zip",
        zip_bytes(
            {
                "batch/a/part-1.jsonl": jsonl_bytes(lines[:1]),
                "batch/b/c/part-2.jsonl": jsonl_bytes(lines[1:]),
                "__MACOSX/batch/a/._part-1.jsonl": b"junk",
            }
        ),
    )
    jsonl = write(tmp_path / "gold.jsonl", equivalent_jsonl())
    assert as_comparable(load_span_corpus(archive)) == as_comparable(load_span_corpus(jsonl))


def test_each_user_of_an_export_is_an_annotator(tmp_path: Path) -> None:
    corpus = load_span_corpus(write(tmp_path / "export.zip", export_zip(("alice", "bob"))))
    assert corpus.annotators() == ["alice", "bob"]
    assert len(corpus.documents) == 2 * len(DOCUMENTS)


def test_several_annotators_need_a_choice_and_the_error_lists_them(tmp_path: Path) -> None:
    corpus = load_span_corpus(write(tmp_path / "export.zip", export_zip(("alice", "bob"))))
    with pytest.raises(InputValidationError, match=r"several annotators \(alice, bob\).*--gold-annotator"):
        select_annotator(corpus, None)
    chosen = select_annotator(corpus, "bob")
    assert {document.annotator for document in chosen} == {"bob"}
    assert sorted(document.document_id for document in chosen) == sorted(DOCUMENTS)


def test_choosing_an_unknown_annotator_lists_the_known_ones(tmp_path: Path) -> None:
    corpus = load_span_corpus(write(tmp_path / "export.zip", export_zip(("alice", "bob"))))
    with pytest.raises(InputValidationError, match="no annotator 'carol' in gold; annotators: alice, bob"):
        select_annotator(corpus, "carol")


def test_a_chosen_annotator_must_have_annotated_every_document(tmp_path: Path) -> None:
    members = {
        "annotation/a.txt/alice.json": cas_json("Max", [(0, 3, "name")]),
        "annotation/a.txt/bob.json": cas_json("Max", [(0, 3, "name")]),
        "annotation/b.txt/bob.json": cas_json("Eva", [(0, 3, "name")]),
    }
    corpus = load_span_corpus(write(tmp_path / "export.zip", zip_bytes(members)))
    with pytest.raises(InputValidationError) as raised:
        select_annotator(corpus, "alice")
    (problem,) = raised.value.problems
    assert problem.document_id == "b"
    assert "did not annotate this document (annotated by: bob)" in problem.message


def test_documents_annotated_by_one_user_each_need_no_choice(tmp_path: Path) -> None:
    members = {
        "annotation/a.txt/alice.json": cas_json("Max", [(0, 3, "name")]),
        "annotation/b.txt/bob.json": cas_json("Eva", [(0, 3, "name")]),
    }
    corpus = load_span_corpus(write(tmp_path / "export.zip", zip_bytes(members)))
    assert [(d.document_id, d.annotator) for d in select_annotator(corpus, None)] == [
        ("a", "alice"),
        ("b", "bob"),
    ]


def test_problems_in_an_archive_name_the_archive_entry(tmp_path: Path) -> None:
    archive = write(
        tmp_path / "gold.zip",
        zip_bytes({"docs/gold.jsonl": jsonl_bytes([jsonl_line("a", "Max", [(0, 4, "name")])])}),
    )
    with pytest.raises(InputValidationError) as raised:
        load_span_corpus(archive)
    (problem,) = raised.value.problems
    assert (problem.file, problem.line, problem.field) == (
        f"{archive}!docs/gold.jsonl",
        1,
        "entities[0].end",
    )


def test_archive_caps_apply_to_span_inputs(tmp_path: Path) -> None:
    archive = write(tmp_path / "gold.zip", zip_bytes({"gold.jsonl": equivalent_jsonl()}))
    with pytest.raises(InputValidationError, match="exceeds the limit of 100 bytes"):
        load_span_corpus(archive, limits=ArchiveLimits(max_member_bytes=100))


def test_a_single_file_named_inside_an_export_keeps_its_document_and_annotator(tmp_path: Path) -> None:
    path = write(tmp_path / "annotation" / "brief-4.txt" / "alice.json", cas_json("Max", [(0, 3, "name")]))
    (document,) = load_span_corpus(path).documents
    assert (document.document_id, document.annotator) == ("brief-4", "alice")


def test_a_damaged_archive_entry_is_reported_not_raised(tmp_path: Path) -> None:
    content = jsonl_bytes([jsonl_line("a", "Max " * 200, [])])
    archive = bytearray(zip_bytes({"gold.jsonl": content}))
    compressed_start = archive.index(b"gold.jsonl") + len("gold.jsonl")
    archive[compressed_start + 5 : compressed_start + 25] = b"\xff" * 20
    with pytest.raises(InputValidationError, match="cannot read file"):
        load_span_corpus(write(tmp_path / "gold.zip", bytes(archive)))
