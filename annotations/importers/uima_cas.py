"""Read UIMA CAS JSON (the format INCEpTION exports) with plain `json`; no cassis dependency.

What matters (docs/semantics.md section 1):
- The text is the `uima.cas.Sofa` feature structure's `sofaString` (the initial view's Sofa).
- Offsets are UTF-16 code units unless `%HEADER.offset-encoding` says UTF-8 or UTF-32. Python strings
  index code points, so every offset is converted; an offset that falls inside a character (half of a
  surrogate pair, the middle of a UTF-8 sequence) is an error for that annotation.
- The Sofa may come after the annotations that point to it, so references are resolved only after
  all feature structures have been read. `%FEATURE_STRUCTURES` may be an array of objects carrying
  `%ID`, or an object keyed by id.
- The legacy `_context`/`_views` JSON of older UIMA versions is rejected with a clear message.

`parse_cas_json` returns every annotation (any feature structure with integer `begin` and `end`) so
callers and tests can see all of them; `is_span_layer` and `span_label` pick out the de-identification
spans.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from annotations.importers.checks import NESTED_TOO_DEEPLY, line_too_deep
from annotations.importers.errors import ProblemCollector

SOFA_TYPE = "uima.cas.Sofa"
INITIAL_VIEW = "_InitialView"
SPAN_TYPE = "custom.Span"
WEBANNO_CUSTOM_PREFIX = "webanno.custom."
# Features that are structure, not an annotation's value.
_STRUCTURAL_FEATURES = frozenset({"begin", "end"})
# Relation layers also carry begin/end (those of their dependent) but are not spans.
_RELATION_FEATURES = ("@Governor", "@Dependent")

_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_ASTRAL = re.compile(r"[\U00010000-\U0010ffff]")


@dataclass(frozen=True, slots=True)
class CasAnnotation:
    """A feature structure with `begin`/`end`, offsets converted to code points."""

    fs_id: str | None
    type_name: str
    begin: int
    end: int
    features: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CasDocument:
    text: str
    annotations: list[CasAnnotation]
    offset_encoding: str


class OffsetConverter:
    """Converts offsets counted in one encoding's code units to code point offsets.

    Only characters wider than one unit shift offsets, so it keeps their unit positions and does a
    binary search, instead of a table as long as the text.
    """

    def __init__(self, text: str, encoding: str):
        self.text_length = len(text)
        if encoding == "UTF-32":
            wide = []
        elif encoding == "UTF-16":
            wide = [(match.start(), 2) for match in _ASTRAL.finditer(text)]
        else:
            wide = [
                (match.start(), len(match.group().encode("utf-8"))) for match in _NON_ASCII.finditer(text)
            ]
        extra_before = [0, *accumulate(width - 1 for _, width in wide)]
        # Unit offset at which each wide character starts.
        self._starts = [position + extra_before[index] for index, (position, _) in enumerate(wide)]
        self._widths = [width for _, width in wide]
        self._extra_before = extra_before
        self.unit_length = self.text_length + extra_before[-1]

    def to_code_point(self, offset: int) -> int | None:
        """The code point offset, or None when `offset` falls inside a character."""
        wide_before = bisect_left(self._starts, offset)
        if wide_before and offset < self._starts[wide_before - 1] + self._widths[wide_before - 1]:
            return None
        return offset - self._extra_before[wide_before]


def parse_offset_encoding(header: Any) -> str | None:
    """The `%HEADER` offset encoding normalized to UTF-8/UTF-16/UTF-32 (default UTF-16); None if unknown."""
    if not isinstance(header, dict) or header.get("offset-encoding") is None:
        return "UTF-16"
    raw = header["offset-encoding"]
    normalized = raw.strip().upper().replace("_", "-") if isinstance(raw, str) else ""
    normalized = {"UTF8": "UTF-8", "UTF16": "UTF-16", "UTF32": "UTF-32"}.get(normalized, normalized)
    return normalized if normalized in ("UTF-8", "UTF-16", "UTF-32") else None


def parse_cas_json(
    raw: bytes,
    *,
    source: str,
    problems: ProblemCollector,
    document_id: str | None = None,
    include_type: Callable[[str, Mapping[str, Any]], bool] | None = None,
) -> CasDocument | None:
    """Parse one CAS JSON file. Returns None (with problems recorded) when it cannot be read at all.

    Only annotations for which `include_type(type_name, features)` holds (all when None) are converted
    and validated, so a malformed token annotation cannot fail an import that only wants spans.
    """
    where = {"file": source, "document_id": document_id}
    data = _cas_object(raw, problems=problems, where=where)
    if data is None:
        return None
    encoding = parse_offset_encoding(data.get("%HEADER"))
    if encoding is None:
        problems.error(
            f"unknown offset encoding {data['%HEADER'].get('offset-encoding')!r}; expected UTF-8, UTF-16 or UTF-32",
            field="%HEADER.offset-encoding",
            **where,
        )
        return None

    if "%FEATURE_STRUCTURES" not in data and "document_id" in data:
        problems.error("this is a JSONL span document, not UIMA CAS JSON; name the file .jsonl", **where)
        return None
    structures = _feature_structures(
        data.get("%FEATURE_STRUCTURES"), source=source, problems=problems, where=where
    )
    if structures is None:
        return None
    sofa_id = _initial_sofa_id(data, structures, problems=problems, where=where)
    if sofa_id is None:
        return None
    text = structures[sofa_id].get("sofaString")
    if not isinstance(text, str):
        problems.error(
            "the Sofa has no sofaString (remote Sofa data is not supported)", field="sofaString", **where
        )
        return None

    annotations = _sofa_annotations(
        structures, sofa_id, OffsetConverter(text, encoding), include_type, problems=problems, where=where
    )
    return CasDocument(text, annotations, encoding)


def _cas_object(raw: bytes, *, problems: ProblemCollector, where: dict[str, Any]) -> dict[str, Any] | None:
    """The file's JSON object, or None with the reason recorded (not UTF-8, not JSON, legacy UIMA JSON)."""
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        problems.error(f"not UTF-8 (invalid byte at offset {error.start})", **where)
        return None
    except json.JSONDecodeError as error:
        problems.error(f"malformed JSON: {error.msg} (line {error.lineno}, column {error.colno})", **where)
        return None
    except RecursionError:
        problems.error(NESTED_TOO_DEEPLY, line=line_too_deep(raw), **where)
        return None
    if not isinstance(data, dict):
        problems.error("not a UIMA CAS JSON object", **where)
        return None
    if "_context" in data or "_views" in data:
        problems.error(
            "legacy UIMA JSON (with _context/_views) is not supported; export the documents as "
            "'UIMA CAS JSON' (INCEpTION: format 'UIMA CAS JSON 0.4.0' or later)",
            **where,
        )
        return None
    return data


def _sofa_annotations(
    structures: dict[str, dict[str, Any]],
    sofa_id: str,
    converter: OffsetConverter,
    include_type: Callable[[str, Mapping[str, Any]], bool] | None,
    *,
    problems: ProblemCollector,
    where: dict[str, Any],
) -> list[CasAnnotation]:
    """The annotations of the initial view that `include_type` wants, their offsets in code points."""
    annotations = []
    for fs_id, structure in structures.items():
        begin, end = structure.get("begin"), structure.get("end")
        type_name = str(structure.get("%TYPE"))
        if type(begin) is not int or type(end) is not int:
            # An annotation the caller wants with offsets that are not integers ("9", NaN, 1e309)
            # would otherwise vanish without a word; without begin or end it is no annotation.
            if (begin is not None or end is not None) and (
                include_type is None or include_type(type_name, structure)
            ):
                for name, value in (("begin", begin), ("end", end)):
                    if type(value) is not int:
                        problems.error(
                            f"{type_name} {fs_id}: {name} must be an integer, got {_shown_offset(value)}",
                            field=name,
                            **where,
                        )
            continue
        reference = structure.get("@sofa")
        if reference is not None and str(reference) != sofa_id:
            if str(reference) not in structures:
                problems.error(
                    f"{type_name} {fs_id} refers to a missing Sofa {reference!r}", field="@sofa", **where
                )
            continue  # an annotation of another view
        if include_type is not None and not include_type(type_name, structure):
            continue
        converted = _convert(fs_id, type_name, begin, end, converter, problems=problems, where=where)
        if converted is not None:
            annotations.append(CasAnnotation(fs_id, type_name, converted[0], converted[1], structure))
    return annotations


def _feature_structures(
    raw: Any, *, source: str, problems: ProblemCollector, where: dict[str, Any]
) -> dict[str, dict[str, Any]] | None:
    """Feature structures by id (as a string: object keys are strings, references are numbers)."""
    if isinstance(raw, dict):
        items = [(str(key), value) for key, value in raw.items()]
    elif isinstance(raw, list):
        items = [(str(value.get("%ID")) if isinstance(value, dict) else "", value) for value in raw]
    else:
        problems.error("no %FEATURE_STRUCTURES array or object", field="%FEATURE_STRUCTURES", **where)
        return None
    structures = {}
    for index, (fs_id, structure) in enumerate(items):
        if not isinstance(structure, dict) or not isinstance(structure.get("%TYPE"), str):
            problems.error(
                f"feature structure {fs_id or index} is not an object with a %TYPE",
                field="%FEATURE_STRUCTURES",
                **where,
            )
            continue
        # An array entry without %ID cannot be referenced; keep it under a key no reference can hit.
        structures[fs_id if fs_id not in ("", "None") else f"#{index}"] = structure
    return structures


def _initial_sofa_id(
    data: dict[str, Any],
    structures: dict[str, dict[str, Any]],
    *,
    problems: ProblemCollector,
    where: dict[str, Any],
) -> str | None:
    sofas = {fs_id: fs for fs_id, fs in structures.items() if fs["%TYPE"] == SOFA_TYPE}
    views = data.get("%VIEWS")
    if isinstance(views, dict) and isinstance(views.get(INITIAL_VIEW), dict):
        declared = views[INITIAL_VIEW].get("%SOFA")
        if declared is not None and str(declared) in sofas:
            return str(declared)
    initial = [fs_id for fs_id, fs in sofas.items() if fs.get("sofaID") == INITIAL_VIEW]
    if len(initial) == 1:
        return initial[0]
    if len(sofas) == 1:
        return next(iter(sofas))
    message = (
        "no uima.cas.Sofa feature structure" if not sofas else "several Sofas and none is the _InitialView"
    )
    problems.error(message, field="uima.cas.Sofa", **where)
    return None


def _convert(
    fs_id: str,
    type_name: str,
    begin: int,
    end: int,
    converter: OffsetConverter,
    *,
    problems: ProblemCollector,
    where: dict[str, Any],
) -> tuple[int, int] | None:
    what = f"{type_name} {fs_id}"
    valid = True
    converted = []
    for name, offset in (("begin", begin), ("end", end)):
        if not 0 <= offset <= converter.unit_length:
            problems.error(
                f"{what}: {name} {offset} is outside the text (0..{converter.unit_length} code units)",
                field=name,
                **where,
            )
            valid = False
            continue
        code_point = converter.to_code_point(offset)
        if code_point is None:
            problems.error(
                f"{what}: {name} {offset} falls inside a character (e.g. half of a UTF-16 surrogate pair)",
                field=name,
                **where,
            )
            valid = False
        converted.append(code_point)
    if valid and begin > end:
        problems.error(f"{what}: begin {begin} is after end {end}", field="begin", **where)
        valid = False
    return (converted[0], converted[1]) if valid else None


def _shown_offset(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def is_span_layer(type_name: str, features: Mapping[str, Any]) -> bool:
    """`custom.Span` and INCEpTION's `webanno.custom.*` span layers (relation layers excluded)."""
    if type_name != SPAN_TYPE and not type_name.startswith(WEBANNO_CUSTOM_PREFIX):
        return False
    return not any(feature in features for feature in _RELATION_FEATURES)


def span_label(annotation: CasAnnotation) -> str:
    """The annotation's label: its `label` feature, else `value`, else its only string feature, else
    the layer's own name (a custom layer without features marks one kind of entity, e.g. PatientName).
    """
    features = annotation.features
    for name in ("label", "value"):
        if isinstance(features.get(name), str):
            return features[name]
    strings = [
        value
        for name, value in features.items()
        if isinstance(value, str) and name not in _STRUCTURAL_FEATURES and not name.startswith(("%", "@"))
    ]
    if len(strings) == 1:
        return strings[0]
    return annotation.type_name.rsplit(".", 1)[-1]
