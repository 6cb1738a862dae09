"""Gold attribute values from an EPPI Reviewer JSON export.

- Attributes: `CodeSets[].Attributes.AttributesList[]` (`AttributeId`, `AttributeName`), nested
  through each attribute's own `Attributes.AttributesList`.
- Documents: `References[]`, `ItemId` (the document id, as a string) and `Title` (the name).
- Gold: `References[].Codes[]` with `AttributeId`, `AdditionalText` and
  `ItemAttributeFullTextDetails[{ItemDocumentId, Text, ItemArm}]`.

EPPI does not type its codes; the prompt CSV does. A BOOL code is True because the code row exists
(docs/semantics.md section 2); any other type reads `AdditionalText` as the raw value, which the engine
coerces (a code without text is a null gold value, left out of the metrics, with a warning). A reference with no codes has not been coded: it is listed in `documents_without_gold` and
passed on with no annotations, which the engine lists as unscored (never scored as "every attribute
absent"); predictions for it are therefore not an error.

A JSON export has no useful line numbers once parsed, so structural problems name their place with a
path such as `References[3].Codes[0].AttributeId` (and the document id where known).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from annotations.importers.attribute_jsonl import GoldSet, decode_utf8, json_type_name, read_source
from annotations.importers.checks import NESTED_TOO_DEEPLY, line_too_deep
from annotations.importers.errors import ProblemCollector
from annotations.importers.json_lines import NOT_PARSED, parse_json_bytes
from annotations.importers.sources import SourceInput
from metrics.engine.attributes.types import AttributeType, FullTextDetail, GoldAnnotation, GoldDocument

# Text of duplicate codes for one attribute is joined with this when the texts differ: conflicting
# numbers then fail coercion and are reported as invalid gold instead of one being silently chosen.
DUPLICATE_TEXT_SEPARATOR = "\n"


def read_eppi_gold(
    source: SourceInput,
    *,
    attribute_types: Mapping[str, AttributeType],
    name: str | None = None,
) -> GoldSet:
    """Read an EPPI Reviewer JSON export; raise InputValidationError listing every problem found.

    `attribute_types` maps attribute ids (decimal strings of EPPI AttributeIds) to their types, from
    the prompt CSV. Codes of attributes not in it keep `AdditionalText` as their raw value.

    """
    problems = ProblemCollector()
    export, file = _parse(source, name, problems)
    return _gold_set(export, file, problems, attribute_types)


def _gold_set(
    export: Any,
    file: str,
    problems: ProblemCollector,
    attribute_types: Mapping[str, AttributeType],
) -> GoldSet:
    """The GoldSet of a parsed export (see `read_eppi_gold`)."""
    if not isinstance(export, dict):
        problems.error(f"expected a JSON object, found {json_type_name(export)}", file=file)
        problems.raise_if_errors()

    attribute_names = _read_code_sets(export.get("CodeSets", []), file, problems)
    references = export.get("References")
    if not isinstance(references, list):
        problems.error(
            "missing References array" if references is None else "References must be an array",
            file=file,
            field="References",
        )
        problems.raise_if_errors()

    reading = _CodeReading(attribute_types, attribute_names, file, problems, {})
    documents, without_gold = _read_references(references, 0, reading)
    problems.raise_if_errors()
    return GoldSet(
        documents=documents,
        documents_without_gold=without_gold,
        attribute_names=attribute_names,
        warnings=problems.warnings,
    )


def read_eppi_references(
    references: list,
    *,
    first_index: int,
    attribute_types: Mapping[str, AttributeType],
    attribute_names: Mapping[str, str],
    file: str,
) -> tuple[list[GoldDocument], list[str], ProblemCollector]:
    """The gold documents of a part of an export's References array (parsed), whose first item is
    `References[first_index]`: (documents, ids of those without codes, the problems found). A
    duplicate ItemId is seen only within the part: whoever joins parts checks across them."""
    problems = ProblemCollector()
    reading = _CodeReading(attribute_types, attribute_names, file, problems, {})
    documents, without_gold = _read_references(references, first_index, reading)
    return documents, without_gold, problems


def read_code_set_names(code_sets: Any, file: str) -> tuple[dict[str, str], ProblemCollector]:
    """{attribute id: name} of an export's parsed CodeSets, and the problems found."""
    problems = ProblemCollector()
    return _read_code_sets(code_sets, file, problems), problems


def _read_references(
    references: list, first_index: int, reading: _CodeReading
) -> tuple[list[GoldDocument], list[str]]:
    """(documents, ids of documents without codes) of References items, the first at `first_index`."""
    file, problems = reading.file, reading.problems
    documents: list[GoldDocument] = []
    without_gold: list[str] = []
    first_index_of: dict[str, int] = {}
    for offset in range(len(references)):
        # Taken out of the parsed export: its objects are freed as soon as its document is built,
        # so the documents reuse their memory instead of adding to it.
        reference, references[offset] = references[offset], None
        index = first_index + offset
        where = f"References[{index}]"
        if not isinstance(reference, dict):
            problems.error(f"must be an object, found {json_type_name(reference)}", file=file, field=where)
            continue
        document_id = _read_id(reference, "ItemId", where, file, problems)
        if document_id is None:
            continue
        if document_id in first_index_of:
            problems.error(
                f"duplicate ItemId (first at References[{first_index_of[document_id]}])",
                file=file,
                document_id=document_id,
                field=f"{where}.ItemId",
            )
            continue
        first_index_of[document_id] = index
        coded = bool(reference.get("Codes"))
        document = _reference_document(reference, where, document_id, reading)
        del reference
        if document is not None:
            if not coded:
                without_gold.append(document_id)
            documents.append(document)
    return documents, without_gold


@dataclass(frozen=True)
class _CodeReading:
    """What reading every reference's codes shares."""

    attribute_types: Mapping[str, AttributeType]
    attribute_names: Mapping[str, str]
    file: str
    problems: ProblemCollector
    # AttributeId integer -> its decimal text, made once: hundreds of thousands of codes share a few
    # ids, and one string object each instead of one per code.
    id_texts: dict[int, str]


def _reference_document(
    reference: dict, where: str, document_id: str, reading: _CodeReading
) -> GoldDocument | None:
    """The gold document of one reference; None when its Codes are not an array."""
    file, problems = reading.file, reading.problems
    title = reference.get("Title")
    if title is not None and not isinstance(title, str):
        problems.error("Title must be a string", file=file, document_id=document_id, field=f"{where}.Title")
    codes = reference.get("Codes") or []
    if not isinstance(codes, list):
        problems.error("Codes must be an array", file=file, document_id=document_id, field=f"{where}.Codes")
        return None
    annotations = _read_codes(
        codes,
        where,
        document_id,
        reading.attribute_types,
        reading.attribute_names,
        file,
        problems,
        reading.id_texts,
    )
    return GoldDocument(
        document_id=document_id,
        name=title if isinstance(title, str) else None,
        external_id=document_id,
        annotations=annotations,
    )


def _parse(source: SourceInput, name: str | None, problems: ProblemCollector) -> tuple[Any, str]:
    data, file = read_source(source, name)
    # orjson reads the bytes straight away (no text copy) where its answer is json's; anything else
    # (a byte order mark, bad UTF-8, malformed JSON, NaN...) is read as before, with json's messages.
    export = parse_json_bytes(data)
    if export is NOT_PARSED:
        text = decode_utf8(data, file, problems)
        # The bytes and then the text are let go as soon as they are used: an export is tens of MB,
        # and the parsed objects are the peak of the whole evaluation's memory.
        del data
        problems.raise_if_errors()
        try:
            export = json.loads(text)
        except json.JSONDecodeError as error:
            problems.error(
                f"malformed JSON: {error.msg} (column {error.colno})", file=file, line=error.lineno
            )
            problems.raise_if_errors()
        except RecursionError:
            problems.error(NESTED_TOO_DEEPLY, file=file, line=line_too_deep(text))
            problems.raise_if_errors()
        del text
    else:
        del data
    return export, file


def _read_id(record: dict, key: str, where: str, file: str, problems: ProblemCollector) -> str | None:
    value = record.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    problems.error(
        f"missing {key}" if value is None else f"{key} must be an integer or a string",
        file=file,
        field=f"{where}.{key}",
    )
    return None


def _read_code_sets(code_sets: Any, file: str, problems: ProblemCollector) -> dict[str, str]:
    names: dict[str, str] = {}
    if not isinstance(code_sets, list):
        problems.error("CodeSets must be an array", file=file, field="CodeSets")
        return names
    # Iterative walk: code trees can be deep, and a stack keeps the document order of attributes.
    stack: list[tuple[str, Any]] = [
        (f"CodeSets[{index}].Attributes", code_set.get("Attributes") if isinstance(code_set, dict) else None)
        for index, code_set in enumerate(code_sets)
    ]
    stack.reverse()
    while stack:
        where, container = stack.pop()
        if container is None:
            continue
        entries = container.get("AttributesList") if isinstance(container, dict) else None
        if not isinstance(entries, list):
            problems.error("expected an object with an AttributesList array", file=file, field=where)
            continue
        children = []
        for index, entry in enumerate(entries):
            entry_where = f"{where}.AttributesList[{index}]"
            if not isinstance(entry, dict):
                problems.error("must be an object", file=file, field=entry_where)
                continue
            attribute_id = _read_id(entry, "AttributeId", entry_where, file, problems)
            if attribute_id is not None:
                attribute_name = entry.get("AttributeName")
                names.setdefault(
                    attribute_id, attribute_name if isinstance(attribute_name, str) else attribute_id
                )
            children.append((f"{entry_where}.Attributes", entry.get("Attributes")))
        stack.extend(reversed(children))
    return names


def _read_codes(
    codes: list,
    where: str,
    document_id: str,
    attribute_types: Mapping[str, AttributeType],
    attribute_names: Mapping[str, str],
    file: str,
    problems: ProblemCollector,
    id_texts: dict[int, str] | None = None,
) -> dict[str, GoldAnnotation]:
    # This loop runs for every code of every reference (hundreds of thousands in a large review), so
    # the common case is kept cheap: exact type checks, and location strings built only for problems.
    if id_texts is None:
        id_texts = {}
    first: dict[str, tuple[str | None, tuple[FullTextDetail, ...]]] = {}
    repeated: dict[str, list[tuple[str | None, tuple[FullTextDetail, ...]]]] = {}
    for index, code in enumerate(codes):
        if type(code) is not dict:
            problems.error(
                "must be an object", file=file, document_id=document_id, field=f"{where}.Codes[{index}]"
            )
            continue
        raw_id = code.get("AttributeId")
        if type(raw_id) is int:
            attribute_id = id_texts.get(raw_id)
            if attribute_id is None:
                attribute_id = id_texts[raw_id] = str(raw_id)
        else:
            attribute_id = _read_id(code, "AttributeId", f"{where}.Codes[{index}]", file, problems)
            if attribute_id is None:
                continue
        if attribute_names and attribute_id not in attribute_names:
            problems.warn(
                f"code for attribute {attribute_id} which no code set defines",
                file=file,
                document_id=document_id,
                field=f"{where}.Codes[{index}].AttributeId",
            )
        text = code.get("AdditionalText")
        if text is not None and type(text) is not str:
            problems.error(
                "AdditionalText must be a string",
                file=file,
                document_id=document_id,
                field=f"{where}.Codes[{index}].AdditionalText",
            )
            continue
        raw_details = code.get("ItemAttributeFullTextDetails")
        details = _read_details(raw_details, where, index, document_id, file, problems) if raw_details else ()
        entry = (text or None, details)
        if attribute_id in first:
            repeated.setdefault(attribute_id, [first[attribute_id]]).append(entry)
        else:
            first[attribute_id] = entry

    annotations: dict[str, GoldAnnotation] = {}
    for attribute_id, (text, details) in first.items():
        if attribute_id in repeated:
            text, details = _merge_duplicates(
                repeated[attribute_id], where, attribute_id, document_id, attribute_names, file, problems
            )
        attribute_type = attribute_types.get(attribute_id)
        output_data: Any = True if attribute_type is AttributeType.BOOL else text
        if output_data is None and attribute_type is not None:
            problems.warn(
                f"code for {attribute_type.value} attribute {attribute_id} "
                f"({attribute_names.get(attribute_id, attribute_id)}) has no AdditionalText: its gold "
                "is null and left out of the metrics",
                file=file,
                document_id=document_id,
                field=f"{where}.Codes",
            )
        annotations[attribute_id] = GoldAnnotation(output_data, text, details)
    return annotations


def _merge_duplicates(
    entries: list[tuple[str | None, tuple[FullTextDetail, ...]]],
    where: str,
    attribute_id: str,
    document_id: str,
    attribute_names: Mapping[str, str],
    file: str,
    problems: ProblemCollector,
) -> tuple[str | None, tuple[FullTextDetail, ...]]:
    """One annotation from several codes: distinct texts joined, citations concatenated, a warning."""
    texts = list(dict.fromkeys(text for text, _ in entries if text))
    problems.warn(
        f"{len(entries)} codes for attribute {attribute_id} "
        f"({attribute_names.get(attribute_id, attribute_id)}) merged into one"
        + (f"; their texts differ: {texts!r}" if len(texts) > 1 else ""),
        file=file,
        document_id=document_id,
        field=f"{where}.Codes",
    )
    details = tuple(detail for _, entry_details in entries for detail in entry_details)
    return (DUPLICATE_TEXT_SEPARATOR.join(texts) if texts else None), details


def _read_details(
    raw: Any, where: str, code_index: int, document_id: str, file: str, problems: ProblemCollector
) -> tuple[FullTextDetail, ...]:
    def location() -> str:
        return f"{where}.Codes[{code_index}].ItemAttributeFullTextDetails"

    if type(raw) is not list:
        problems.error("must be an array", file=file, document_id=document_id, field=location())
        return ()
    details = []
    for index, entry in enumerate(raw):
        text = entry.get("Text") if type(entry) is dict else None
        if type(text) is not str:
            problems.error(
                "must be an object with a string Text",
                file=file,
                document_id=document_id,
                field=f"{location()}[{index}]",
            )
            continue
        item_document_id = entry.get("ItemDocumentId")
        item_arm = entry.get("ItemArm")
        details.append(
            FullTextDetail(
                text,
                None if item_document_id is None else str(item_document_id),
                None if item_arm is None or item_arm == "" else str(item_arm),
            )
        )
    return tuple(details)
