"""Gold attribute values from an EPPI Reviewer JSON export.

- Attributes: `CodeSets[].Attributes.AttributesList[]` (`AttributeId`, `AttributeName`), nested
  through each attribute's own `Attributes.AttributesList`.
- Documents: `References[]`, `ItemId` (the document id, as a string) and `Title` (the name).
- Gold: `References[].Codes[]` with `AttributeId`, `AdditionalText` and
  `ItemAttributeFullTextDetails[{ItemDocumentId, Text, ItemArm}]`.

EPPI does not type its codes; the prompt CSV does. A BOOL code is True because the code row exists
(SEMANTICS.md section 2); any other type reads `AdditionalText` as the raw value, which the engine
coerces (a code without text is a null gold value, left out of the metrics, with a warning). A reference with no codes has not been coded: it is listed in `documents_without_gold` and
passed on with no annotations, which the engine lists as unscored (never scored as "every attribute
absent"); predictions for it are therefore not an error.

A JSON export has no useful line numbers once parsed, so structural problems name their place with a
path such as `References[3].Codes[0].AttributeId` (and the document id where known).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from annotations.importers.attribute_jsonl import (
    GoldSet,
    InputSource,
    Shard,
    decode_utf8,
    json_type_name,
    read_source,
)
from annotations.importers.checks import NESTED_TOO_DEEPLY, line_too_deep
from annotations.importers.errors import ProblemCollector
from annotations.importers.json_lines import NOT_PARSED, parse_json_bytes
from metrics.engine.attributes.types import AttributeType, FullTextDetail, GoldAnnotation, GoldDocument

# Text of duplicate codes for one attribute is joined with this when the texts differ: conflicting
# numbers then fail coercion and are reported as invalid gold instead of one being silently chosen.
DUPLICATE_TEXT_SEPARATOR = "\n"


def read_eppi_gold(
    source: InputSource,
    *,
    attribute_types: Mapping[str, AttributeType],
    name: str | None = None,
    shard: Shard | None = None,
    lean_parse: bool = False,
    on_parsed: Callable[[], None] | None = None,
) -> GoldSet:
    """Read an EPPI Reviewer JSON export; raise InputValidationError listing every problem found.

    `attribute_types` maps attribute ids (decimal strings of EPPI AttributeIds) to their types, from
    the prompt CSV. Codes of attributes not in it keep `AdditionalText` as their raw value.

    With `shard`, only the references of its slice become documents (`Shard.range`); the ids of all
    of them are still read and checked, and listed in `GoldSet.all_document_ids`. Problems and
    warnings are those of its own references (and every id problem); the code sets' warnings are
    left to shard 0.

    `lean_parse`: parse with json, not orjson: slower, with a lower peak of memory (see `_parse`).
    `on_parsed`: called once the file is parsed (the peak of memory of the read is then behind:
    the bytes and the parser's own document are freed), before any document is built.
    """
    problems = ProblemCollector()
    export, file = _parse(source, name, problems, lean=lean_parse)
    if on_parsed is not None:
        on_parsed()
    return _gold_set(export, file, problems, attribute_types, shard)


def _gold_set(
    export: Any,
    file: str,
    problems: ProblemCollector,
    attribute_types: Mapping[str, AttributeType],
    shard: Shard | None,
    *,
    code_set_warnings: bool = True,
    place_part: Callable[[list[str]], tuple[int, list[str]]] | None = None,
) -> GoldSet:
    """The GoldSet of a parsed export (see `read_eppi_gold`).

    For one part of an export's references (`read_eppi_gold_part`): `code_set_warnings` False
    leaves the code sets' warnings to the first part, and `place_part(ids)` is given the part's
    document ids once they are read, before any document is built, and returns where the part
    starts among the export's references and every id of the export, in order.
    """
    if not isinstance(export, dict):
        problems.error(f"expected a JSON object, found {json_type_name(export)}", file=file)
        problems.raise_if_errors()

    if code_set_warnings and (shard is None or shard.index == 0):
        attribute_names = _read_code_sets(export.get("CodeSets", []), file, problems)
    else:  # the same names; their warnings are shard 0's to report
        code_set_problems = ProblemCollector()
        attribute_names = _read_code_sets(export.get("CodeSets", []), file, code_set_problems)
        problems.errors.extend(code_set_problems.errors)
    references = export.get("References")
    if not isinstance(references, list):
        problems.error(
            "missing References array" if references is None else "References must be an array",
            file=file,
            field="References",
        )
        problems.raise_if_errors()

    documents: list[GoldDocument] = []
    without_gold: list[str] = []
    first_index: dict[str, int] = {}
    # AttributeId integer -> its decimal text, made once: hundreds of thousands of codes share a few
    # ids, and one string object each instead of one per code.
    id_texts: dict[int, str] = {}
    if place_part is not None:
        shard = Shard(0, 1)  # all of this part, read as a shard: ids first, then documents
    own = range(len(references)) if shard is None else shard.range(len(references))
    # A shard reads every id first, letting the other shards' references go as it does, and builds
    # its own documents afterwards: the whole parsed export never sits beside the documents.
    own_ids: dict[int, str] = {}

    def build(index: int, reference: dict, document_id: str) -> None:
        where = f"References[{index}]"
        title = reference.get("Title")
        if title is not None and not isinstance(title, str):
            problems.error(
                "Title must be a string", file=file, document_id=document_id, field=f"{where}.Title"
            )
        codes = reference.get("Codes") or []
        if not isinstance(codes, list):
            problems.error(
                "Codes must be an array", file=file, document_id=document_id, field=f"{where}.Codes"
            )
            return
        if not codes:
            without_gold.append(document_id)
        annotations = _read_codes(
            codes, where, document_id, attribute_types, attribute_names, file, problems, id_texts
        )
        documents.append(
            GoldDocument(
                document_id=document_id,
                name=title if isinstance(title, str) else None,
                external_id=document_id,
                annotations=annotations,
            )
        )

    for index in range(len(references)):
        if shard is None or index not in own:
            # Taken out of the parsed export: its objects are freed as soon as its document is
            # built (or its id read), so the documents reuse their memory instead of adding to it.
            reference, references[index] = references[index], None
        else:
            reference = references[index]
        where = f"References[{index}]"
        if not isinstance(reference, dict):
            problems.error(f"must be an object, found {json_type_name(reference)}", file=file, field=where)
            continue
        document_id = _read_id(reference, "ItemId", where, file, problems)
        if document_id is None:
            continue
        if document_id in first_index:
            problems.error(
                f"duplicate ItemId (first at References[{first_index[document_id]}])",
                file=file,
                document_id=document_id,
                field=f"{where}.ItemId",
            )
            continue
        first_index[document_id] = index
        if shard is None:
            build(index, reference, document_id)
        elif index in own:
            own_ids[index] = document_id
        del reference
    all_ids = None if shard is None else list(first_index)
    offset = 0
    if place_part is not None:
        problems.raise_if_errors()
        offset, all_ids = place_part(list(own_ids.values()))
    for index, document_id in own_ids.items():
        reference, references[index] = references[index], None
        build(index + offset, reference, document_id)
        del reference
    problems.raise_if_errors()
    return GoldSet(
        documents=documents,
        documents_without_gold=without_gold,
        attribute_names=attribute_names,
        warnings=problems.warnings,
        all_document_ids=all_ids,
    )


class ExportNotSplit(Exception):
    """The export's references could not be cut in two parts as `read_eppi_gold_part` needs."""


# The start of a reference whose first key is ItemId, after the comma that ends the one before
# (`split_references`). No JSON string holds `{"` (its quotes are escaped), so a match is never
# inside one; it may be a nested object's, which the parse of the first part then rejects.
_NEXT_REFERENCE = re.compile(rb',\s*(\{)\s*"ItemId"')
_REFERENCES_OPENING = re.compile(rb"\s*:\s*\[")


def split_references(data: bytes, fraction: float) -> tuple[bytes, bytes, bytes]:
    """The export as (head, first part, second part), cut in its References array without parsing:
    the head is the export with an empty References array, each part a JSON array of whole
    references, cut before the first reference that starts (with its ItemId) after `fraction` of
    the array's bytes.

    ExportNotSplit when the layout does not allow it: "References" appears more than once, or is not
    the export's last key, or no reference starts with its ItemId after the cut point. The cut is
    sound only if the first part parses: a cut before a nested object leaves a reference open, and
    the part is then not valid JSON. The caller must parse both (`read_eppi_gold_part`).
    """
    key = data.find(b'"References"')
    if key < 0 or data.find(b'"References"', key + 1) >= 0:
        raise ExportNotSplit("no single References key")
    opening = _REFERENCES_OPENING.match(data, key + len(b'"References"'))
    if opening is None:
        raise ExportNotSplit("References is not followed by an array")
    array_open = opening.end() - 1
    end = data.rstrip()
    if not end.endswith(b"}") or not end[:-1].rstrip().endswith(b"]"):
        raise ExportNotSplit("References is not the export's last key")
    array_close = len(end[:-1].rstrip()) - 1
    target = array_open + int((array_close - array_open) * fraction)
    cut = _NEXT_REFERENCE.search(data, target, array_close)
    if cut is None:
        raise ExportNotSplit("no reference starts with its ItemId after the cut point")
    head = data[: array_open + 1] + data[array_close:]
    first = data[array_open : cut.start()] + b"]"
    second = b"[" + data[cut.start(1) : array_close + 1]
    return head, first, second


def read_eppi_gold_part(
    source: InputSource,
    *,
    attribute_types: Mapping[str, AttributeType],
    part: int,
    fraction: float,
    place_part: Callable[[list[str]], tuple[int, list[str]]],
    name: str | None = None,
) -> GoldSet:
    """`read_eppi_gold` of one of two parts of the export's references (`split_references`): part 0
    up to the cut, part 1 after it. Only that part (and the head) is parsed: half the time and
    memory of the whole file. The other part's ids are the other part's to read: `place_part(ids)`
    is given this part's document ids and returns where the part starts among the references (for
    the places that problems name) and every id of the export, in order (`_gold_set`). The code
    sets' warnings are part 0's.

    ExportNotSplit when the export's layout does not allow the cut (the same in both parts: each can
    read the whole file instead); ValueError when a piece does not parse (the run must be read
    another way: the whole file names what is wrong); InputValidationError as read_eppi_gold.
    """
    data, file = read_source(source, name)
    head, first, second = split_references(data, fraction)
    del data
    export = parse_json_bytes(head)
    del head
    piece = parse_json_bytes(first if part == 0 else second)
    del first, second
    if not isinstance(export, dict) or export.get("References") != [] or not isinstance(piece, list):
        # Not a matter of layout, which both parts see alike: the other part may have parsed. The
        # caller must not read the whole file in this part alone (the two would not share the
        # references out alike).
        raise ValueError("a piece of the export did not parse as one part of its references")
    export["References"] = piece
    del piece
    problems = ProblemCollector()
    return _gold_set(
        export, file, problems, attribute_types, None, code_set_warnings=part == 0, place_part=place_part
    )


def _parse(
    source: InputSource, name: str | None, problems: ProblemCollector, *, lean: bool = False
) -> tuple[Any, str]:
    data, file = read_source(source, name)
    # orjson reads the bytes straight away (no text copy) where its answer is json's; anything else
    # (a byte order mark, bad UTF-8, malformed JSON, NaN...) is read as before, with json's messages.
    # `lean`: json only. orjson first builds a document of its own for the whole file, so its peak
    # is about 60% above json's (on a 35 MB export: 200 MB against 140 MB), for half the time.
    export = NOT_PARSED if lean else parse_json_bytes(data)
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
