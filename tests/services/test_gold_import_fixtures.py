"""Builders for import uploads (span JSONL, INCEpTION CAS zips, EPPI, prompt CSV), shared by the
service, worker and API tests; the tests at the bottom pin the builders themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.importers.test_span_fixtures import cas_json, jsonl_bytes, jsonl_line, zip_bytes

EXTRACTION_DATA = Path(__file__).resolve().parent.parent / "data" / "extraction"

LETTER_1 = "Herr Max Mustermann, geb. 01.02.1980, wohnt in Berlin."
LETTER_2 = "Frau Anna Schmidt wurde am 03.04.2021 entlassen."
LETTER_3 = "Keine Angaben zur Person."


def letters_jsonl(*, second_date_type: str = "OTHER_DATE") -> bytes:
    """Three letters: two with identifiers, one with none (still gold: nothing to remove)."""
    return jsonl_bytes(
        [
            jsonl_line("letter-1", LETTER_1, [(5, 19, "PatientName"), (26, 36, "DateOfBirth")]),
            jsonl_line("letter-2", LETTER_2, [(5, 17, "name"), (27, 37, second_date_type)]),
            jsonl_line("letter-3", LETTER_3, []),
        ]
    )


def cas_export_zip(*, with_broken_file: bool = False) -> bytes:
    """An INCEpTION project export: two annotated letters by alice (and an INITIAL_CAS to skip)."""
    members = {
        "annotation/letter-1.txt/INITIAL_CAS.json": cas_json(LETTER_1, []),
        "annotation/letter-1.txt/alice.json": cas_json(LETTER_1, [(5, 19, "PatientName")]),
        "annotation/letter-2.txt/alice.json": cas_json(LETTER_2, [(5, 17, "PatientName")]),
    }
    if with_broken_file:
        members["annotation/letter-9.txt/alice.json"] = b'{"%FEATURE_STRUCTURES": [ this is not JSON'
    return zip_bytes(members)


def eppi_bytes() -> bytes:
    return (EXTRACTION_DATA / "gold_eppi.json").read_bytes()


def prompts_bytes() -> bytes:
    return (EXTRACTION_DATA / "prompts.csv").read_bytes()


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


@pytest.fixture
def media_root(settings, tmp_path):
    """Uploads go to a fresh folder per test."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def test_the_letters_offsets_point_at_their_identifiers() -> None:
    lines = [json.loads(line) for line in letters_jsonl().decode().splitlines()]
    texts = [line["text"][e["start"] : e["end"]] for line in lines for e in line["entities"]]
    assert texts == ["Max Mustermann", "01.02.1980", "Anna Schmidt", "03.04.2021"]


def test_the_cas_export_holds_one_broken_file_only_when_asked() -> None:
    assert b"letter-9" not in cas_export_zip()
    assert b"letter-9" in cas_export_zip(with_broken_file=True)
