"""Builders for span inputs (JSONL lines, CAS JSON, zips), shared by the span importer tests.

CAS JSON is written the way INCEpTION writes it: offsets in UTF-16 code units unless another
encoding is asked for. The tests at the bottom pin the builders themselves, so a wrong fixture
cannot make a wrong reader look right.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SpanTuple = tuple[int, int, str]

ENCODED_WIDTH = {"UTF-8": "utf-8", "UTF-16": "utf-16-le", "UTF-32": "utf-32-le"}
UNIT_BYTES = {"UTF-8": 1, "UTF-16": 2, "UTF-32": 4}


def encoded_offset(text: str, code_point_offset: int, encoding: str = "UTF-16") -> int:
    """A code point offset expressed in `encoding`'s code units."""
    return len(text[:code_point_offset].encode(ENCODED_WIDTH[encoding])) // UNIT_BYTES[encoding]


def jsonl_line(document_id: str, text: str | None, spans: Sequence[SpanTuple], **extra: Any) -> str:
    record: dict[str, Any] = {"document_id": document_id}
    if text is not None:
        record["text"] = text
    record["entities"] = [{"start": start, "end": end, "entity_type": label} for start, end, label in spans]
    record.update(extra)
    return json.dumps(record, ensure_ascii=False)


def jsonl_bytes(lines: Sequence[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


def cas_json(
    text: str,
    spans: Sequence[SpanTuple],
    *,
    encoding: str | None = None,
    structures_as_object: bool = False,
    sofa_last: bool = False,
    span_type: str = "custom.Span",
    raw_offsets: Sequence[tuple[int, int]] | None = None,
) -> bytes:
    """A CAS JSON document. Spans are given in code points and written in `encoding` (default
    UTF-16, also when the header is left out); `raw_offsets` writes offsets exactly as given."""
    unit_encoding = encoding or "UTF-16"
    sofa = {"%ID": 1, "%TYPE": "uima.cas.Sofa", "sofaNum": 1, "sofaID": "_InitialView", "mimeType": "text"}
    sofa["sofaString"] = text
    annotations = []
    for index, (start, end, label) in enumerate(spans):
        begin_units, end_units = (
            raw_offsets[index]
            if raw_offsets is not None
            else (encoded_offset(text, start, unit_encoding), encoded_offset(text, end, unit_encoding))
        )
        annotations.append(
            {
                "%ID": 10 + index,
                "%TYPE": span_type,
                "@sofa": 1,
                "begin": begin_units,
                "end": end_units,
                "label": label,
            }
        )
    document_annotation = {
        "%ID": 2,
        "%TYPE": "uima.tcas.DocumentAnnotation",
        "@sofa": 1,
        "begin": 0,
        "end": encoded_offset(text, len(text), unit_encoding),
        "language": "x-unspecified",
    }
    structures = (
        [*annotations, document_annotation, sofa] if sofa_last else [sofa, document_annotation, *annotations]
    )
    data: dict[str, Any] = {}
    if encoding is not None:
        data["%HEADER"] = {"%VERSION": "1.0.0", "offset-encoding": encoding}
    data["%TYPES"] = {}
    if structures_as_object:
        data["%FEATURE_STRUCTURES"] = {
            str(structure["%ID"]): {key: value for key, value in structure.items() if key != "%ID"}
            for structure in structures
        }
    else:
        data["%FEATURE_STRUCTURES"] = structures
    members = [structure["%ID"] for structure in structures if structure["%TYPE"] != "uima.cas.Sofa"]
    data["%VIEWS"] = {"_InitialView": {"%SOFA": 1, "%MEMBERS": members}}
    return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")


def zip_bytes(members: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def write(path: Path, content: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def test_utf16_offsets_count_astral_characters_as_two_units() -> None:
    text = "🥳 Max"
    assert encoded_offset(text, 2) == 3
    assert encoded_offset(text, 2, "UTF-8") == 5
    assert encoded_offset(text, 2, "UTF-32") == 2


def test_cas_builder_writes_utf16_offsets_by_default() -> None:
    data = json.loads(cas_json("🥳 Max", [(2, 5, "NAME")]))
    span = next(fs for fs in data["%FEATURE_STRUCTURES"] if fs["%TYPE"] == "custom.Span")
    assert (span["begin"], span["end"]) == (3, 6)
    assert "%HEADER" not in data


def test_cas_builder_can_key_structures_by_id_and_put_the_sofa_last() -> None:
    as_object = json.loads(cas_json("x", [], structures_as_object=True))
    assert as_object["%FEATURE_STRUCTURES"]["1"]["%TYPE"] == "uima.cas.Sofa"
    sofa_last = json.loads(cas_json("x", [(0, 1, "A")], sofa_last=True))
    assert sofa_last["%FEATURE_STRUCTURES"][-1]["%TYPE"] == "uima.cas.Sofa"
