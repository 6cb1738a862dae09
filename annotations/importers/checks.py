"""Checks that a value read from a file can be stored: text fit for the database, finite numbers.

The API checks request bodies for the same (`evalproject.validation`, which reads `text_fault` and
`JSON_MAX_DEPTH` from here: the API may import the importers, never the other way round).

A file can be well-formed and still hold what no column takes: a NUL character (PostgreSQL refuses
it in text and in JSON), a text longer than its column, NaN or a number beyond the float range
(`1e309` reads as infinity, which JSON cannot write back), or JSON nested deeper than anyone
annotates. Importers call these checks while they read, before anything is written, and turn the
answer into an `ImportProblem` naming the file, line and field. Plain Python: the server passes
the columns' lengths in (`ColumnLimits`, read from the model fields by the import service).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from annotations.importers.errors import ImportProblem
from annotations.importers.span_types import SpanDocument
from metrics.engine.attributes.types import GoldDocument

# Deeper JSON than this in one value is refused: real gold values are flat lists and objects, and
# the parsers and the database's JSON functions recurse (Python's json fails near 1,000 levels).
JSON_MAX_DEPTH = 64
_UNSTORABLE_CHARACTER = re.compile("[\x00\ud800-\udfff]")
# What a parser's RecursionError means to the user.
NESTED_TOO_DEEPLY = f"JSON nested too deeply to read (the limit is {JSON_MAX_DEPTH} levels)"


@dataclass(frozen=True, slots=True)
class ColumnLimits:
    """The longest text each stored column takes, in characters (None: no limit)."""

    document_id: int | None = None
    document_name: int | None = None
    entity_type: int | None = None
    label: int | None = None
    attribute_id: int | None = None
    attribute_label: int | None = None


@dataclass(frozen=True, slots=True)
class TextFault:
    """Why a string cannot be stored as text: `kind` is "nul" or "surrogate" (at character `at`), or
    "length" (`length` characters, over `max_length`)."""

    kind: str
    at: int = 0
    character: str = ""
    length: int = 0
    max_length: int | None = None


def text_fault(value: str, *, max_length: int | None = None) -> TextFault | None:
    """The one check that a string fits a text column (PostgreSQL refuses NUL, UTF-8 has no lone
    surrogates, a column has a length), or None when it does. Importers and the API (`evalproject.
    validation`) phrase the answer each for their readers."""
    bad = _UNSTORABLE_CHARACTER.search(value)
    if bad is not None:
        kind = "nul" if bad.group() == "\x00" else "surrogate"
        return TextFault(kind, at=bad.start(), character=bad.group())
    if max_length is not None and len(value) > max_length:
        return TextFault("length", length=len(value), max_length=max_length)
    return None


def text_problem(value: str, *, max_length: int | None = None) -> str | None:
    """Why `value` cannot be stored as text (a NUL character, a lone surrogate, too long), or None."""
    fault = text_fault(value, max_length=max_length)
    if fault is None:
        return None
    if fault.kind == "nul":
        return f"contains a NUL character (\\x00) at position {fault.at}, which cannot be stored"
    if fault.kind == "surrogate":
        # JSON's "\ud800" escape reads as half of a UTF-16 pair, which no UTF-8 text can hold.
        return f"contains a lone surrogate (U+{ord(fault.character):04X}) at position {fault.at}"
    return f"is {fault.length} characters long; the limit is {fault.max_length}"


# GoldVersion.annotator's column; a human run is named after its annotator too.
ANNOTATOR_MAX_LENGTH = 150


def annotator_problem(value: Any) -> str | None:
    """Why `value` cannot name an annotator (a non-empty string fit for its column), or None."""
    if type(value) is not str or not value:
        return "must be a non-empty string (the annotator's name)"
    return text_problem(value, max_length=ANNOTATOR_MAX_LENGTH)


def number_problem(value: float) -> str | None:
    """Why `value` is not a storable number (NaN, infinite), or None when it is finite."""
    if math.isnan(value):
        return "is NaN, which is not a number"
    if math.isinf(value):
        return f"is {value} (beyond the range of a number, e.g. 1e309), which cannot be stored"
    return None


def json_value_problem(value: Any, *, max_depth: int = JSON_MAX_DEPTH) -> tuple[str, str] | None:
    """The first place in a JSON value that cannot be stored, as (path below the value, why).

    The path is "" for the value itself, else `[2]`, `.key` or a chain of them. Strings and object
    keys must pass `text_problem`, numbers `number_problem`; nesting deeper than `max_depth` is
    refused. Iterative, so a deep value cannot exhaust the stack here.
    """
    for path, item, depth in _walk(value):
        if depth > max_depth:
            return path[:40] + "...", f"is nested more than {max_depth} levels deep"
        if isinstance(item, str):
            problem = text_problem(item)
        elif isinstance(item, float):
            problem = number_problem(item)
        else:
            continue
        if problem is not None:
            return path, problem
    return None


def line_too_deep(data: bytes | str, *, max_depth: int = JSON_MAX_DEPTH) -> int | None:
    """The line of JSON `data` where nesting first passes `max_depth`, to name where a file that was
    too deep to parse goes wrong. Only read after a parse failed: a plain loop over the text."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    depth, line, in_string, escaped = 0, 1, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return line
        elif char in "]}":
            depth -= 1
        if char == "\n":
            line += 1
    return None


def shown(value: str, *, limit: int = 60) -> str:
    """`value` as a message may quote it: escaped (`repr`, so a NUL shows as \\x00), cut at `limit`."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + f"... ({len(value)} characters)"


def fit_or_none(value: str | None) -> str | None:
    """`value` when a problem may carry it as its document id (stored with the job), else None."""
    if value is None or text_problem(value, max_length=1000) is not None:
        return None
    return value


def _walk(value: Any) -> Iterator[tuple[str, Any, int]]:
    """(path, item, depth) for `value` and everything in it, keys of objects as items too."""
    stack = [("", value, 0)]
    while stack:
        path, item, depth = stack.pop()
        yield path, item, depth
        if depth > JSON_MAX_DEPTH * 2:
            continue  # already refused; going further only costs time
        if isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                key_path = f"{path}.{key if text_problem(key, max_length=100) is None else shown(key)}"
                yield key_path, key, depth + 1
                stack.append((key_path, child, depth + 1))
        elif isinstance(item, list):
            stack.extend(
                (f"{path}[{index}]", child, depth + 1) for index, child in reversed(list(enumerate(item)))
            )


def span_document_problems(document: SpanDocument, limits: ColumnLimits) -> list[ImportProblem]:
    """What of a span document cannot be stored: its id, its text, its spans' labels and types."""
    where = {"file": document.source, "line": document.line, "document_id": fit_or_none(document.document_id)}
    problems = []
    problem = text_problem(document.document_id, max_length=limits.document_id)
    if problem is not None:
        problems.append(
            ImportProblem(
                f"document id {shown(document.document_id)} {problem}", field="document_id", **where
            )
        )
    if document.text is not None and (problem := text_problem(document.text)) is not None:
        problems.append(ImportProblem(f"the text {problem}", field="text", **where))
    checked: set[tuple[str, str]] = set()
    for index, span in enumerate(document.spans):
        if (span.label, span.entity_type) in checked:
            continue
        checked.add((span.label, span.entity_type))
        # JSONL names the entity; a CAS file has no entity index, and its label is what to fix.
        field = f"entities[{index}].entity_type" if document.line is not None else "label"
        for what, value, limit in (
            ("label", span.label, limits.label),
            ("entity type", span.entity_type, limits.entity_type),
        ):
            problem = text_problem(value, max_length=limit)
            if problem is not None:
                problems.append(ImportProblem(f"the {what} {shown(value)} {problem}", field=field, **where))
                break
    return problems


def gold_document_problems(
    document: GoldDocument, limits: ColumnLimits, *, file: str, line: int | None = None
) -> list[ImportProblem]:
    """What of an attribute gold document cannot be stored: id, name, text, and every value."""
    where = {"file": file, "line": line, "document_id": fit_or_none(document.document_id)}
    problems = []
    for name, value, limit in (
        ("document_id", document.document_id, limits.document_id),
        ("name", document.name, limits.document_name),
        ("text", document.text, None),
    ):
        if value is not None and (problem := text_problem(value, max_length=limit)) is not None:
            shown_value = f" {shown(value)}" if name != "text" else ""
            problems.append(ImportProblem(f"the {name}{shown_value} {problem}", field=name, **where))
    for attribute_id, annotation in document.annotations.items():
        path = f"attributes.{attribute_id if text_problem(attribute_id, max_length=100) is None else shown(attribute_id)}"
        problem = text_problem(attribute_id, max_length=limits.attribute_id)
        if problem is not None:
            problems.append(
                ImportProblem(f"the attribute id {shown(attribute_id)} {problem}", field=path, **where)
            )
            continue
        found = json_value_problem(annotation.output_data)
        if found is not None:
            problems.append(
                ImportProblem(f"the value {found[1]}", field=f"{path}.output_data{found[0]}", **where)
            )
        texts = [("additional_text", annotation.additional_text)]
        for index, detail in enumerate(annotation.full_text_details):
            detail_path = f"full_text_details[{index}]"
            texts += [
                (f"{detail_path}.text", detail.text),
                (f"{detail_path}.item_document_id", detail.item_document_id),
                (f"{detail_path}.item_arm", detail.item_arm),
            ]
        for name, value in texts:
            if value is not None and (problem := text_problem(value)) is not None:
                problems.append(ImportProblem(f"the text {problem}", field=f"{path}.{name}", **where))
    return problems
