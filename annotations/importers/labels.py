"""Map annotation labels to the twelve canonical entity types (docs/semantics.md section 1, "Labels").

Annotation projects rarely use our type names, so every raw label goes through a `LabelMap`: the
default map, with a user map merged over it. Lookup is `label.strip().lower()`. A label that maps to
nothing becomes OTHER_PII, and the import reports one warning per distinct label naming the documents
it occurred in, so a user learns about a typo once, not ten thousand times.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from annotations.importers.errors import ImportProblem, InputValidationError

CANONICAL_TYPES: tuple[str, ...] = (
    "PERSON_NAME",
    "DATE_OF_BIRTH",
    "OTHER_DATE",
    "AGE",
    "ADDRESS",
    "PHONE",
    "EMAIL",
    "URL",
    "ID_NUMBER",
    "ORGANIZATION",
    "PROFESSION",
    "OTHER_PII",
)
FALLBACK_TYPE = "OTHER_PII"

# The labels the predecessor harness's annotation workflow (LLMAIx) uses, plus each canonical name.
DEFAULT_LABEL_MAP: Mapping[str, str] = MappingProxyType(
    {
        "patientname": "PERSON_NAME",
        "firstname": "PERSON_NAME",
        "lastname": "PERSON_NAME",
        "name": "PERSON_NAME",
        "patientid": "ID_NUMBER",
        "dateofbirth": "DATE_OF_BIRTH",
        "age": "AGE",
        "patientgender": "OTHER_PII",
        "sex": "OTHER_PII",
        **{canonical.lower(): canonical for canonical in CANONICAL_TYPES},
    }
)

# How many document ids a warning message names before it says "and N more"; the full list is kept
# in the warning's `documents` field.
_DOCUMENTS_NAMED_IN_MESSAGE = 10


def normalize_label(label: str) -> str:
    return label.strip().lower()


@dataclass(frozen=True)
class LabelMap:
    """Normalized label → canonical type. Build with `LabelMap.default()` or `load_label_map()`."""

    mapping: Mapping[str, str]
    source: str | None = None

    @classmethod
    def default(cls) -> LabelMap:
        return cls(DEFAULT_LABEL_MAP)

    def merged_with(self, overrides: Mapping[str, str], *, source: str | None = None) -> LabelMap:
        """This map with `overrides` (raw label → canonical type, any case) taking precedence.

        Raises InputValidationError naming every entry whose target is not a canonical type.
        """
        problems: list[ImportProblem] = []
        merged = dict(self.mapping)
        canonical_by_lower = {canonical.lower(): canonical for canonical in CANONICAL_TYPES}
        for raw_label, target in overrides.items():
            if not isinstance(raw_label, str) or not raw_label.strip():
                problems.append(
                    ImportProblem("a label must be a non-empty string", file=source, field=str(raw_label))
                )
                continue
            canonical = canonical_by_lower.get(target.strip().lower()) if isinstance(target, str) else None
            if canonical is None:
                problems.append(
                    ImportProblem(
                        f"{target!r} is not a canonical entity type; expected one of {', '.join(CANONICAL_TYPES)}",
                        file=source,
                        field=raw_label,
                    )
                )
                continue
            merged[normalize_label(raw_label)] = canonical
        if problems:
            raise InputValidationError(problems)
        return LabelMap(MappingProxyType(merged), source=source)

    def lookup(self, label: str) -> str | None:
        """The canonical type for `label`, or None when the map does not know it."""
        return self.mapping.get(normalize_label(label))


def load_label_map(path: str | os.PathLike[str] | None) -> LabelMap:
    """The default map, with the JSON object in `path` (label → canonical type) merged over it."""
    base = LabelMap.default()
    if path is None:
        return base
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise InputValidationError(
            ImportProblem(f"cannot read label map: {error.strerror}", file=name)
        ) from None
    return parse_label_map(raw, source=name, base=base)


def parse_label_map(raw: bytes | str, *, source: str = "label map", base: LabelMap | None = None) -> LabelMap:
    """Parse a label map given as JSON text (e.g. an upload) and merge it over `base` (the default)."""
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as error:
        raise InputValidationError(
            ImportProblem(f"not UTF-8 (invalid byte at offset {error.start})", file=source)
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputValidationError(
            ImportProblem(
                f"malformed JSON: {error.msg} (line {error.lineno}, column {error.colno})", file=source
            )
        ) from None
    if not isinstance(data, dict):
        raise InputValidationError(
            ImportProblem('a label map must be a JSON object {"label": "CANONICAL_TYPE", ...}', file=source)
        )
    return (base or LabelMap.default()).merged_with(data, source=source)


@dataclass
class LabelResolver:
    """Resolves the labels of one input (gold or predictions) and remembers the unknown ones.

    One resolver per input so that each warning names the file set it concerns. Lookups are cached
    per raw label: a corpus has few distinct labels and millions of spans. The cache also hands back
    one shared string per distinct raw label, so keeping the raw label on every span costs no memory.
    """

    label_map: LabelMap
    input_name: str | None = None
    _cache: dict[str, tuple[str, str, bool]] = field(default_factory=dict)
    # The known labels only: a hit here needs no bookkeeping, so hot loops may read it directly.
    known_label_cache: dict[str, tuple[str, str, bool]] = field(default_factory=dict)
    _unknown_documents: dict[str, dict[str, None]] = field(default_factory=dict)

    def resolve(self, label: str, document_id: str) -> tuple[str, str, bool]:
        """(canonical type, shared raw label, unknown?). Unknown labels give OTHER_PII and are recorded.

        Returns the cached tuple itself: this runs once per span, millions of times per import.
        """
        cached = self._cache.get(label)
        if cached is None:
            canonical = self.label_map.lookup(label)
            cached = (canonical or FALLBACK_TYPE, label, canonical is None)
            self._cache[label] = cached
            if canonical is not None:
                self.known_label_cache[label] = cached
        if cached[2]:
            # A dict keeps first-seen order of the documents and ignores repeats.
            self._unknown_documents.setdefault(cached[1], {})[document_id] = None
        return cached

    def warnings(self) -> list[ImportProblem]:
        """One warning per distinct unknown label, in order of first appearance."""
        problems = []
        for label, documents in self._unknown_documents.items():
            document_ids = tuple(documents)
            named = ", ".join(repr(document_id) for document_id in document_ids[:_DOCUMENTS_NAMED_IN_MESSAGE])
            more = len(document_ids) - _DOCUMENTS_NAMED_IN_MESSAGE
            if more > 0:
                named += f" and {more} more"
            plural = "s" if len(document_ids) != 1 else ""
            problems.append(
                ImportProblem(
                    f"unknown label {label!r} mapped to {FALLBACK_TYPE} (add it to a label map to choose its "
                    f"type); found in {len(document_ids)} document{plural}: {named}",
                    file=self.input_name,
                    field="entity_type",
                    documents=document_ids,
                )
            )
        return problems
