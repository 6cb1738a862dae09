"""Read an uploaded import file into plain data, checking everything before anything is written.

Formats (the `format` of an import): `jsonl` (span JSONL, or attribute JSONL: told apart by the first
record's `entities` / `attributes` key), `cas` (INCEpTION UIMA CAS JSON files, directories or zips),
`eppi` (EPPI Reviewer JSON), `prompts_csv` (the attribute schema), and `auto`, which decides by the
file's extension and, for `.json` and `.jsonl`, its first bytes.

Each reader is one of the importers in `annotations/importers/`; this module only turns their
output into `GoldImport` (one shape for both kinds of gold) and computes the per-document hashes that
tell an identical re-import from a changed one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from annotations.importers.attribute_jsonl import read_gold_jsonl
from annotations.importers.checks import ColumnLimits, gold_document_problems, span_document_problems
from annotations.importers.eppi import read_eppi_gold
from annotations.importers.errors import ImportProblem, InputValidationError, ProblemCollector
from annotations.importers.formats import SNIFF_BYTES, content_format
from annotations.importers.labels import LabelMap, LabelResolver
from annotations.importers.prompts_csv import PromptSet, read_prompts_csv
from annotations.importers.sources import ArchiveLimits
from annotations.importers.span_types import SpanAnnotation, SpanCorpus, SpanDocument
from annotations.importers.spans import iter_span_documents, select_annotator
from annotations.models import Attribute, Document, GoldKind, GoldSpan
from metrics.engine.attributes.types import AttributeType, GoldAnnotation, GoldDocument

FORMATS = ("auto", "jsonl", "cas", "eppi", "prompts_csv")

ProgressCallback = Callable[[int], None]


@dataclass(slots=True)
class ImportedDocument:
    """One document of an import: its text (None when the format has none, e.g. EPPI) and its gold."""

    external_id: str
    text: str | None
    name: str | None
    gold_hash: str
    spans: list[SpanAnnotation] = field(default_factory=list)
    values: Mapping[str, GoldAnnotation] = field(default_factory=dict)


@dataclass
class GoldImport:
    """Everything an import will write, already checked against itself (not yet against the database)."""

    kind: str
    documents: list[ImportedDocument]
    annotator: str = ""
    warnings: list[ImportProblem] = field(default_factory=list)
    # The annotations of every annotator but the gold one (several-annotator exports), by annotator:
    # they become human runs, scored against this gold like any model.
    other_annotators: dict[str, list[ImportedDocument]] = field(default_factory=dict)


def detect_format(path: Path, declared: str) -> str:
    """The concrete format of `path`: `declared` unless it is `auto`."""
    if declared != "auto":
        return declared
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return "cas"
    if suffix == ".csv":
        return "prompts_csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    with path.open("rb") as stream:
        found = content_format(stream.read(SNIFF_BYTES))
    if found is not None:
        return found
    raise InputValidationError(
        ImportProblem(
            "cannot tell the format from the file name or content; give format=jsonl, cas, eppi or prompts_csv",
            file=path.name,
            field="format",
        )
    )


def jsonl_kind(path: Path) -> str:
    """spans or attributes, from the first non-blank line of a JSONL file."""
    with path.open("rb") as stream:
        for raw in stream:
            if raw.strip():
                try:
                    record = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                    break  # the span reader reports the bad line with its number
                if isinstance(record, dict) and "attributes" in record and "entities" not in record:
                    return GoldKind.ATTRIBUTES
                break
    return GoldKind.SPANS


def read_spans(
    path: Path,
    *,
    display_name: str,
    label_map: LabelMap,
    annotator: str | None,
    limits: ArchiveLimits,
    progress: ProgressCallback,
) -> GoldImport:
    """Span gold from JSONL or CAS (files, zips). Mirrors `load_span_corpus`, reporting progress."""
    problems = ProblemCollector()
    labels = LabelResolver(label_map, input_name=display_name)
    documents: list[SpanDocument] = []
    seen: dict[tuple[str, str | None], SpanDocument] = {}
    columns = column_limits()
    for document in iter_span_documents(path, role="gold", labels=labels, limits=limits, problems=problems):
        unfit = span_document_problems(document, columns)
        if unfit:
            problems.errors.extend(unfit)
            continue
        first = seen.setdefault((document.document_id, document.annotator), document)
        if first is not document:
            problems.error(
                f"duplicate document id (first seen at {_display(first.location(), path, display_name)})",
                file=_display(document.source, path, display_name),
                line=document.line,
                document_id=document.document_id,
                field="document_id",
            )
        documents.append(document)
        if len(documents) % 1000 == 0:
            progress(len(documents))
    if not documents and not problems.errors:
        problems.error("no gold documents found (expected .jsonl or .json files)", file=display_name)
    if problems.errors:
        raise InputValidationError([_renamed(problem, path, display_name) for problem in problems.errors])
    corpus = SpanCorpus(documents, [*problems.warnings, *labels.warnings()])
    try:
        chosen = select_annotator(corpus, annotator, source=display_name)
    except InputValidationError as error:
        # The importer speaks to command-line users; over the API the choice is the `annotator` field.
        problems = [_renamed(problem, path, display_name) for problem in error.problems]
        raise InputValidationError(
            [
                replace(
                    problem, message=problem.message.replace("--gold-annotator NAME", "the annotator field")
                )
                for problem in problems
            ]
        ) from None
    progress(len(documents))
    imported = [_imported_spans(document) for document in chosen]
    others: dict[str, list[ImportedDocument]] = {}
    if annotator:
        for document in documents:
            if document.annotator is not None and document.annotator != annotator:
                others.setdefault(document.annotator, []).append(_imported_spans(document))
    return GoldImport(
        kind=GoldKind.SPANS,
        documents=imported,
        annotator=annotator or "",
        warnings=[_renamed(problem, path, display_name) for problem in corpus.warnings],
        other_annotators=dict(sorted(others.items())),
    )


def _imported_spans(document: SpanDocument) -> ImportedDocument:
    return ImportedDocument(
        external_id=document.document_id,
        text=document.text,
        name=None,
        gold_hash=span_gold_hash(document.spans),
        spans=document.spans,
    )


def read_attribute_gold(
    path: Path,
    *,
    display_name: str,
    eppi: bool,
    attribute_types: Mapping[str, AttributeType],
    annotator: str | None = None,
) -> GoldImport:
    """Attribute gold from native JSONL or an EPPI Reviewer export.

    JSONL whose lines name an `annotator` may hold several annotators' values for a document: those
    of `annotator` are the gold (the only one's when there is one), the others `other_annotators`.
    """
    columns = column_limits()
    if eppi:
        gold = read_eppi_gold(path, attribute_types=attribute_types, name=display_name)
        # An export has no lines: each problem names its document and field.
        unfit = [
            problem
            for document in gold.documents
            for problem in gold_document_problems(document, columns, file=display_name)
        ]
        if unfit:
            raise InputValidationError(unfit)
    else:
        gold = read_gold_jsonl(path, name=display_name, by_annotator=_names_annotators(path), limits=columns)
    imported = [_imported_values(document) for document in gold.documents]
    if gold.annotators is None:
        return GoldImport(kind=GoldKind.ATTRIBUTES, documents=imported, warnings=list(gold.warnings))
    names = sorted(set(gold.annotators))
    if annotator is None and len(names) > 1:
        raise InputValidationError(
            ImportProblem(
                f"gold holds several annotators ({', '.join(names)}); choose one with the annotator field "
                "(or the project setting gold_annotator)",
                file=display_name,
                field="annotator",
            )
        )
    chosen = annotator or names[0]
    if chosen not in names:
        raise InputValidationError(
            ImportProblem(
                f"no annotator {chosen!r} in gold; annotators: {', '.join(names)}",
                file=display_name,
                field="annotator",
            )
        )
    others: dict[str, list[ImportedDocument]] = {}
    for document, name in zip(imported, gold.annotators, strict=True):
        if name != chosen:
            others.setdefault(name, []).append(document)
    return GoldImport(
        kind=GoldKind.ATTRIBUTES,
        documents=[
            document for document, name in zip(imported, gold.annotators, strict=True) if name == chosen
        ],
        annotator=chosen,
        warnings=list(gold.warnings),
        other_annotators=others,
    )


def _imported_values(document: GoldDocument) -> ImportedDocument:
    return ImportedDocument(
        external_id=document.document_id,
        text=document.text,
        name=document.name,
        gold_hash=attribute_gold_hash(document.annotations),
        values=document.annotations,
    )


def _names_annotators(path: Path) -> bool:
    """True when the first record of an attribute JSONL file names its annotator."""
    with path.open("rb") as stream:
        for raw in stream:
            if raw.strip():
                try:
                    record = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    return False  # the reader reports the bad line with its number
                return isinstance(record, dict) and "annotator" in record
    return False


def read_prompts(path: Path, *, display_name: str) -> PromptSet:
    return read_prompts_csv(path, name=display_name, limits=column_limits())


def column_limits() -> ColumnLimits:
    """The longest text each column of the gold and schema tables takes, from the model fields."""

    def longest(model, name: str) -> int:
        return model._meta.get_field(name).max_length

    return ColumnLimits(
        document_id=longest(Document, "external_id"),
        document_name=longest(Document, "name"),
        entity_type=longest(GoldSpan, "entity_type"),
        label=longest(GoldSpan, "label"),
        attribute_id=longest(Attribute, "attribute_id"),
        attribute_label=longest(Attribute, "label"),
    )


def span_gold_hash(spans: list[SpanAnnotation]) -> str:
    """Order-independent hash of one document's spans (bounds, canonical type and raw label)."""
    canonical = sorted((span.start, span.end, span.entity_type, span.label) for span in spans)
    return hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode()).hexdigest()


def attribute_gold_hash(annotations: Mapping[str, GoldAnnotation]) -> str:
    """Hash of one document's attribute gold: every value, text and citation detail, by attribute id."""
    canonical = {
        attribute_id: [
            annotation.output_data,
            annotation.additional_text,
            [
                [detail.text, detail.item_document_id, detail.item_arm]
                for detail in annotation.full_text_details
            ],
        ]
        for attribute_id, annotation in annotations.items()
    }
    encoded = json.dumps(canonical, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(encoded.encode()).hexdigest()


def _display(name: str | None, path: Path, display_name: str) -> str | None:
    """Problems name the file as the user uploaded it, not as it was stored on the server."""
    if name is None:
        return None
    stored = str(path)
    return display_name + name[len(stored) :] if name.startswith(stored) else name


def _renamed(problem: ImportProblem, path: Path, display_name: str) -> ImportProblem:
    return ImportProblem(
        problem.message,
        file=_display(problem.file, path, display_name),
        line=problem.line,
        document_id=problem.document_id,
        field=problem.field,
        documents=problem.documents,
    )


def as_problem_dicts(problems: list[ImportProblem]) -> list[dict[str, Any]]:
    return [problem.as_dict() for problem in problems]
