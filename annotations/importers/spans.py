"""Load span documents (gold or predictions) from any supported input.

Inputs: a JSONL file, a UIMA CAS JSON file, a directory or a zip archive holding any mix of them
(see `sources.py` for the walking rules). Public entry points:

- `load_span_corpus(source, *, label_map, limits, role)` reads everything, checks it and returns a
  `SpanCorpus`, or raises `InputValidationError` listing every problem.
- `iter_span_documents(...)` yields documents one at a time for callers that stream (the offline
  evaluation pairs predictions with gold as they are read); the caller owns the `ProblemCollector`
  and the `LabelResolver` and must check both when the iteration ends.

INCEpTION project exports (`annotation/<document name>/<user>.json`, also `curation/...`) are
recognised by their layout: the document id is the folder name without its file extension, the
annotator is the file name without `.json`, and `INITIAL_CAS.json` (the unannotated copy) is skipped.
In such an export only those files are read; the rest (`source/`, `exportedproject.json`) is
project metadata. Elsewhere a CAS file's document id is its file name without `.json`.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from annotations.importers.errors import ImportProblem, InputValidationError, ProblemCollector
from annotations.importers.labels import LabelMap, LabelResolver
from annotations.importers.sources import (
    ArchiveLimits,
    InMemorySource,
    SourceFile,
    SourceInput,
    iter_source_files,
)
from annotations.importers.span_jsonl import iter_jsonl_documents
from annotations.importers.span_types import Role, SpanAnnotation, SpanCorpus, SpanDocument
from annotations.importers.uima_cas import is_span_layer, parse_cas_json, span_label

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
CAS_SUFFIXES = frozenset({".json"})
EXPORT_FOLDERS = frozenset({"annotation", "curation"})
INITIAL_CAS = "INITIAL_CAS"
# What reading a damaged file or archive entry raises (a bad CRC, a truncated deflate stream...).
UNREADABLE = (OSError, EOFError, zipfile.BadZipFile, zlib.error)


def load_span_corpus(
    source: SourceInput,
    *,
    label_map: LabelMap | None = None,
    limits: ArchiveLimits | None = None,
    role: Role = "gold",
) -> SpanCorpus:
    """Read and check every document of `source`. Raises InputValidationError with all problems.

    Besides each document's own checks, a document id may occur once per annotator.
    """
    problems = ProblemCollector()
    labels = LabelResolver(label_map or LabelMap.default(), input_name=_source_name(source))
    documents = list(
        iter_span_documents(
            source, role=role, labels=labels, limits=limits or ArchiveLimits(), problems=problems
        )
    )
    seen: dict[tuple[str, str | None], SpanDocument] = {}
    for document in documents:
        key = (document.document_id, document.annotator)
        first = seen.setdefault(key, document)
        if first is not document:
            problems.error(
                f"duplicate document id (first seen at {first.location()})",
                file=document.source,
                line=document.line,
                document_id=document.document_id,
                field="document_id",
            )
    if not documents and not problems.errors:
        problems.error(
            f"no {role} documents found (expected .jsonl or .json files)", file=_source_name(source)
        )
    problems.raise_if_errors()
    return SpanCorpus(documents, [*problems.warnings, *labels.warnings()])


def iter_span_documents(
    source: SourceInput,
    *,
    role: Role,
    labels: LabelResolver,
    limits: ArchiveLimits,
    problems: ProblemCollector,
) -> Iterator[SpanDocument]:
    """Yield the documents of every readable file of `source`, recording problems as they are found."""
    export_roots = _export_roots(source, limits=limits)
    # A single file named on its own may still sit in an export (`annotation/<doc>/<user>.json`).
    single_file = None
    if (
        not isinstance(source, InMemorySource)
        and Path(source).is_file()
        and Path(source).suffix.lower() != ".zip"
    ):
        single_file = Path(source).absolute()
    for file in iter_source_files(source, limits=limits, problems=problems):
        path = file.relative_path
        location = _export_location(PurePosixPath(single_file.as_posix()) if single_file else path)
        if location is not None:
            document_id, annotator = location
            if annotator != INITIAL_CAS:
                document = _read_cas_file(file, document_id, annotator, labels=labels, problems=problems)
                if document is not None:
                    yield document
        elif any(root in path.parents for root in export_roots):
            continue  # project metadata and source copies of an INCEpTION export
        elif file.suffix in JSONL_SUFFIXES:
            yield from _read_jsonl_file(file, role=role, labels=labels, problems=problems)
        elif file.suffix in CAS_SUFFIXES:
            document = _read_cas_file(file, path.stem, None, labels=labels, problems=problems)
            if document is not None:
                yield document
        else:
            problems.warn("skipped: not a .jsonl or .json file", file=file.display_name)


def _export_roots(source: SourceInput, *, limits: ArchiveLimits) -> frozenset[PurePosixPath]:
    """Folders holding an INCEpTION project export (their `annotation/<doc>/<user>.json` files).

    A first pass over the names only (nothing is read): archives may list `source/` before
    `annotation/`, and the source copies must be skipped wherever they come. Problems are recorded by
    the real pass.
    """
    roots = set()
    for file in iter_source_files(source, limits=limits, problems=ProblemCollector()):
        if _export_location(file.relative_path) is not None:
            roots.add(file.relative_path.parents[2])
    return frozenset(roots)


def _source_name(source: SourceInput) -> str:
    return source.name if isinstance(source, InMemorySource) else str(source)


def _export_location(path: PurePosixPath) -> tuple[str, str] | None:
    """(document id, annotator) for `.../annotation/<document>/<user>.json`, else None."""
    parts = path.parts
    if len(parts) >= 3 and parts[-3] in EXPORT_FOLDERS and path.suffix.lower() == ".json":
        return PurePosixPath(parts[-2]).stem, path.stem
    return None


def _read_jsonl_file(
    file: SourceFile, *, role: Role, labels: LabelResolver, problems: ProblemCollector
) -> Iterator[SpanDocument]:
    try:
        with file.open() as stream:
            yield from iter_jsonl_documents(
                stream, source=file.display_name, role=role, labels=labels, problems=problems
            )
    except UNREADABLE as error:
        problems.error(f"cannot read file: {error}", file=file.display_name)


def _read_cas_file(
    file: SourceFile,
    document_id: str,
    annotator: str | None,
    *,
    labels: LabelResolver,
    problems: ProblemCollector,
) -> SpanDocument | None:
    try:
        raw = file.read_bytes()
    except UNREADABLE as error:
        problems.error(f"cannot read file: {error}", file=file.display_name, document_id=document_id)
        return None
    errors_before = len(problems.errors)
    cas = parse_cas_json(
        raw, source=file.display_name, problems=problems, document_id=document_id, include_type=is_span_layer
    )
    if cas is None:
        return None
    spans = []
    for annotation in cas.annotations:
        if annotation.begin >= annotation.end:
            problems.error(
                f"{annotation.type_name} {annotation.fs_id}: begin must be before end (an empty span)",
                file=file.display_name,
                document_id=document_id,
                field="begin",
            )
            continue
        canonical, raw_label, _ = labels.resolve(span_label(annotation), document_id)
        spans.append(SpanAnnotation(annotation.begin, annotation.end, canonical, raw_label))
    if len(problems.errors) > errors_before:
        return None
    return SpanDocument(document_id, cas.text, spans, file.display_name, annotator=annotator)


def select_annotator(
    corpus: SpanCorpus, annotator: str | None, *, role: Role = "gold", source: str | None = None
) -> list[SpanDocument]:
    """One annotation per document: the one by `annotator`, or the only one when there is no choice.

    Raises InputValidationError when a document has several annotators and none was chosen (the
    message lists them), or when the chosen annotator is unknown or missed some documents.
    """
    by_document: dict[str, list[SpanDocument]] = {}
    for document in corpus.documents:
        by_document.setdefault(document.document_id, []).append(document)
    annotators = corpus.annotators()
    if annotator is None:
        ambiguous = [document_id for document_id, versions in by_document.items() if len(versions) > 1]
        if ambiguous:
            raise InputValidationError(
                ImportProblem(
                    f"{role} holds several annotators ({', '.join(annotators)}) for {len(ambiguous)} documents "
                    f"(e.g. {ambiguous[0]!r}); choose one with --gold-annotator NAME",
                    file=source,
                    field="annotator",
                )
            )
        return [versions[0] for versions in by_document.values()]
    if annotator not in annotators:
        known = ", ".join(annotators) if annotators else "none (the input names no annotators)"
        raise InputValidationError(
            ImportProblem(
                f"no annotator {annotator!r} in {role}; annotators: {known}", file=source, field="annotator"
            )
        )
    selected = []
    problems = []
    for document_id, versions in by_document.items():
        chosen = [version for version in versions if version.annotator == annotator]
        if chosen:
            selected.append(chosen[0])
        else:
            others = ", ".join(sorted(str(version.annotator) for version in versions))
            problems.append(
                ImportProblem(
                    f"annotator {annotator!r} did not annotate this document (annotated by: {others})",
                    file=versions[0].source,
                    document_id=document_id,
                    field="annotator",
                )
            )
    if problems:
        raise InputValidationError(problems)
    return selected
