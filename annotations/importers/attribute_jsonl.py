"""Gold attribute values in the native JSONL format, and the JSONL reading shared with predictions.

One document a line::

    {"document_id": "d1", "name": "Smith 2020", "text": "...",
     "attributes": {"<attribute_id>": {"output_data": ..., "additional_text": "...",
                                       "full_text_details": [{"text": "Page 2: ...",
                                                              "item_document_id": "7",
                                                              "item_arm": null}]}}}

`output_data` is kept raw: the engine coerces it to the attribute's type and reports what does not
parse. An attribute absent from `attributes` takes the attribute's missing-annotation default, as
long as the document has gold for some attribute of the schema; a document with none at all is
listed by the engine as unscored, like an EPPI reference without codes.

Document ids are strings; a JSON integer is accepted and read as its decimal string, because EPPI
item ids are integers and pipelines echo them back as such. Nothing else is coerced.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from annotations.importers.checks import (
    NESTED_TOO_DEEPLY,
    ColumnLimits,
    annotator_problem,
    gold_document_problems,
)
from annotations.importers.errors import ImportProblem, ProblemCollector
from annotations.importers.json_lines import NOT_PARSED, parse_json_bytes
from annotations.importers.sources import InMemorySource, SourceInput
from metrics.engine.attributes.types import FullTextDetail, GoldAnnotation, GoldDocument


def source_name(source: SourceInput, name: str | None = None) -> str:
    """The file name that problems found in `source` should carry."""
    if name:
        return name
    if isinstance(source, bytes):
        return "<upload>"
    if isinstance(source, InMemorySource):
        return source.name
    return str(source)


def read_source(source: SourceInput, name: str | None = None) -> tuple[bytes, str]:
    """Return the bytes of `source` and the file name that problems should carry."""
    if isinstance(source, bytes):
        return source, source_name(source, name)
    if isinstance(source, InMemorySource):
        return source.data, source_name(source, name)
    return Path(source).read_bytes(), source_name(source, name)


@contextmanager
def open_binary(source: SourceInput) -> Iterator[IO[bytes]]:
    """A binary stream over `source`. A file is streamed rather than read whole, so a large JSONL
    file costs memory only for the documents built from it."""
    if isinstance(source, bytes):
        yield io.BytesIO(source)
    elif isinstance(source, InMemorySource):
        yield io.BytesIO(source.data)
    else:
        with open(source, "rb") as stream:
            yield stream


def decode_utf8(data: bytes, file: str, problems: ProblemCollector) -> str | None:
    """Decode a whole file (a BOM is dropped); on failure record the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        problems.error(f"the file is not valid UTF-8 (byte {error.start})", file=file, line=line)
        return None


def iter_json_objects(
    lines: Iterable[bytes],
    file: str,
    problems: ProblemCollector,
) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line of a binary stream; record bad lines and
    go on.

    Lines are decoded one at a time so that every undecodable or malformed line is reported, not
    only the first.
    """
    for line_number, raw in enumerate(lines, start=1):
        if line_number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        value = parse_json_bytes(raw)
        if value is NOT_PARSED:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                problems.error(
                    f"the line is not valid UTF-8 (column {error.start + 1})", file=file, line=line_number
                )
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as error:
                problems.error(
                    f"malformed JSON: {error.msg} (column {error.colno})", file=file, line=line_number
                )
                continue
            except RecursionError:
                problems.error(NESTED_TOO_DEEPLY, file=file, line=line_number)
                continue
        if not isinstance(value, dict):
            problems.error(
                f"expected a JSON object, found {json_type_name(value)}", file=file, line=line_number
            )
            continue
        yield line_number, value


def json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def read_document_id(
    record: dict, file: str, line: int, problems: ProblemCollector, *, key: str = "document_id"
) -> str | None:
    """The line's document id as a string (integers accepted, see the module docstring)."""
    if key not in record:
        problems.error(f"missing {key}", file=file, line=line, field=key)
        return None
    value = record[key]
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    problems.error(
        f"{key} must be a non-empty string, found {json_type_name(value)}", file=file, line=line, field=key
    )
    return None


def optional_string(
    record: dict,
    key: str,
    file: str,
    line: int,
    problems: ProblemCollector,
    *,
    document_id: str | None = None,
    field_path: str | None = None,
) -> str | None:
    value = record.get(key)
    if value is None or isinstance(value, str):
        return value
    problems.error(
        f"must be a string or null, found {json_type_name(value)}",
        file=file,
        line=line,
        document_id=document_id,
        field=field_path or key,
    )
    return None


@dataclass
class GoldSet:
    """Gold documents read from one file, in file order, and what the reader noticed."""

    documents: list[GoldDocument]
    # Documents present in the file with no gold at all (EPPI references without codes). They are
    # also in `documents`, with no annotations: the engine lists them as unscored.
    documents_without_gold: list[str] = field(default_factory=list)
    # attribute_id -> name, when the format defines attributes (EPPI code sets).
    attribute_names: dict[str, str] = field(default_factory=dict)
    warnings: list[ImportProblem] = field(default_factory=list)
    # Read `by_annotator`: the `annotator` of each of `documents`, in the same order.
    annotators: list[str] | None = None

    def document_ids(self) -> list[str]:
        return [document.document_id for document in self.documents]


def read_gold_jsonl(
    source: SourceInput,
    *,
    name: str | None = None,
    by_annotator: bool = False,
    limits: ColumnLimits | None = None,
) -> GoldSet:
    """Read native gold JSONL; raise InputValidationError listing every problem found.

    `by_annotator`: every line names its `annotator` (a non-empty string), and a document may occur
    once per annotator (agreement between annotators); `GoldSet.annotators` says whose each is.
    With `limits` (the server's columns), a value the database cannot store is a problem too.
    """
    file = source_name(source, name)
    problems = ProblemCollector()
    documents: list[GoldDocument] = []
    annotators: list[str] = []
    first_line: dict[tuple[str, str | None], int] = {}
    with open_binary(source) as stream:
        for line, record in iter_json_objects(stream, file, problems):
            document_id = read_document_id(record, file, line, problems)
            annotator = None
            if by_annotator:
                annotator = record.get("annotator")
                why = annotator_problem(annotator)
                if why is not None:
                    problems.error(
                        "required; a non-empty string (the annotator's name)" if annotator is None else why,
                        file=file,
                        line=line,
                        document_id=document_id,
                        field="annotator",
                    )
                    continue
            if document_id is not None:
                key = (document_id, annotator)
                if key in first_line:
                    problems.error(
                        f"duplicate document_id (first on line {first_line[key]})",
                        file=file,
                        line=line,
                        document_id=document_id,
                        field="document_id",
                    )
                    continue
                first_line[key] = line
            document_name = optional_string(record, "name", file, line, problems, document_id=document_id)
            external_id = optional_string(
                record, "external_id", file, line, problems, document_id=document_id
            )
            text = optional_string(record, "text", file, line, problems, document_id=document_id)
            annotations = _read_annotations(record, file, line, document_id, problems)
            if document_id is not None and annotations is not None:
                document = GoldDocument(
                    document_id=document_id,
                    name=document_name,
                    external_id=external_id or document_id,
                    text=text,
                    annotations=annotations,
                )
                if limits is not None:
                    problems.errors.extend(gold_document_problems(document, limits, file=file, line=line))
                documents.append(document)
                annotators.append(annotator or "")
    problems.raise_if_errors()
    return GoldSet(
        documents=documents, warnings=problems.warnings, annotators=annotators if by_annotator else None
    )


def _read_annotations(
    record: dict, file: str, line: int, document_id: str | None, problems: ProblemCollector
) -> dict[str, GoldAnnotation] | None:
    attributes = record.get("attributes", {})
    if not isinstance(attributes, dict):
        problems.error(
            f"attributes must be an object keyed by attribute_id, found {json_type_name(attributes)}",
            file=file,
            line=line,
            document_id=document_id,
            field="attributes",
        )
        return None
    annotations: dict[str, GoldAnnotation] = {}
    ok = True
    for attribute_id, value in attributes.items():
        where = f"attributes.{attribute_id}"
        if not isinstance(value, dict):
            problems.error(
                f"must be an object with output_data, found {json_type_name(value)}",
                file=file,
                line=line,
                document_id=document_id,
                field=where,
            )
            ok = False
            continue
        if "output_data" not in value:
            problems.error(
                "missing output_data",
                file=file,
                line=line,
                document_id=document_id,
                field=f"{where}.output_data",
            )
            ok = False
            continue
        additional_text = optional_string(
            value,
            "additional_text",
            file,
            line,
            problems,
            document_id=document_id,
            field_path=f"{where}.additional_text",
        )
        details = _read_full_text_details(
            value.get("full_text_details"), file, line, document_id, where, problems
        )
        if details is None:
            ok = False
            continue
        annotations[attribute_id] = GoldAnnotation(
            output_data=value["output_data"], additional_text=additional_text, full_text_details=details
        )
    return annotations if ok else None


def _read_full_text_details(
    raw: Any, file: str, line: int, document_id: str | None, where: str, problems: ProblemCollector
) -> tuple[FullTextDetail, ...] | None:
    if raw is None:
        return ()
    path = f"{where}.full_text_details"
    if not isinstance(raw, list):
        problems.error(
            f"must be an array, found {json_type_name(raw)}",
            file=file,
            line=line,
            document_id=document_id,
            field=path,
        )
        return None
    details = []
    for index, entry in enumerate(raw):
        entry_path = f"{path}[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            problems.error(
                "must be an object with a string text",
                file=file,
                line=line,
                document_id=document_id,
                field=entry_path,
            )
            return None
        item_document_id = entry.get("item_document_id")
        if item_document_id is not None and not isinstance(item_document_id, (str, int)):
            problems.error(
                "must be a string, an integer or null",
                file=file,
                line=line,
                document_id=document_id,
                field=f"{entry_path}.item_document_id",
            )
            return None
        item_arm = optional_string(
            entry,
            "item_arm",
            file,
            line,
            problems,
            document_id=document_id,
            field_path=f"{entry_path}.item_arm",
        )
        details.append(
            FullTextDetail(
                text=entry["text"],
                item_document_id=None if item_document_id is None else str(item_document_id),
                item_arm=item_arm,
            )
        )
    return tuple(details)
