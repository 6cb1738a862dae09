"""Write checked gold into the database as a new gold version, in one transaction, or nothing.

What a version is: a full snapshot of a project's gold of one kind (spans or attributes). Importing
makes version n+1 = version n's gold for the documents this import does not mention + this import's
gold for the documents it does (a mentioned document's old gold is replaced, never merged). Earlier
versions keep their rows and stay readable and unchanged; a score names the version it used.

- Identical content again (every document already stored with the same text, and the current
  version's gold for each equal to the import's) is a no-op: no version, result `{"unchanged": true}`.
- Documents are created when new. A document whose stored text differs from the imported text is an
  error naming it, and nothing is written: offsets of existing gold and predictions point into the
  stored text, so it cannot change under them. A document stored without text (created by an EPPI
  import, which carries none) takes the text of the first import that has one.
- Attribute values for an attribute the project's schema does not have are skipped, with one warning
  per attribute: import the prompt CSV first to add it.

Writing: new documents, the version's document list, and its gold rows go through `bulk_insert`
(COPY on PostgreSQL); the gold of documents carried over from the previous version is copied with
one `INSERT ... SELECT` per table, inside the database.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from annotations.importers.errors import ImportProblem, InputValidationError
from annotations.models import (
    Attribute,
    Document,
    GoldAttributeValue,
    GoldKind,
    GoldSpan,
    GoldVersion,
    GoldVersionDocument,
    Project,
)
from annotations.selectors.documents import document_states_by_external_id
from annotations.selectors.gold import gold_version_current, gold_version_document_hashes
from annotations.services.bulk import JobProgress, bulk_insert, json_cell
from annotations.services.gold_read import GoldImport, ImportedDocument, attribute_gold_hash
from metrics.engine.attributes.citations import parse_citation


@dataclass(frozen=True, slots=True)
class GoldImportOutcome:
    """The job result (counts, or `unchanged`) and warnings about what was left out."""

    result: dict
    warnings: list[dict]


EMPTY_TEXT_HASH = Document.hash_text("")

# Called in the import's transaction once its gold is written: `(project=, gold_version=, created=,
# gold=, user=)`, `created` False when the import changed nothing; what a hook returns (problem dicts)
# joins the import's warnings. The metrics app registers the human runs of the other annotators and
# the re-scoring of runs on a new version from its AppConfig.ready(): annotations must not import
# metrics (dependencies point one way).
GoldImportedHook = Callable[..., list[dict] | None]
_gold_imported_hooks: list[GoldImportedHook] = []


def register_gold_imported_hook(hook: GoldImportedHook) -> None:
    if hook not in _gold_imported_hooks:
        _gold_imported_hooks.append(hook)


# GoldAttributeValue.citation_page is a display column; the full details are kept beside it.
CITATION_PAGE_MAX = GoldAttributeValue._meta.get_field("citation_page").max_length


def gold_import(
    *,
    project: Project,
    gold: GoldImport,
    user: AbstractBaseUser | None = None,
    source: str = "",
    progress: JobProgress | None = None,
) -> GoldImportOutcome:
    """Write `gold` as the project's next version of its kind; return the counts for the job result.

    Raises InputValidationError (nothing written) when the import conflicts with stored documents.
    """
    with transaction.atomic():
        # One import per project at a time: version numbers and the carried-over gold must come
        # from the version that is current when this one is written.
        Project.objects.select_for_update().get(pk=project.pk)
        outcome = _write(project=project, gold=gold, user=user, source=source, progress=progress)
        version = (
            GoldVersion.objects.get(project=project, kind=gold.kind, number=outcome.result["gold_version"])
            if _gold_imported_hooks
            else None
        )
        for hook in _gold_imported_hooks:
            warnings = hook(
                project=project,
                gold_version=version,
                created=not outcome.result["unchanged"],
                gold=gold,
                user=user,
            )
            outcome.warnings.extend(warnings or [])
        return outcome


def _write(
    *,
    project: Project,
    gold: GoldImport,
    user: AbstractBaseUser | None,
    source: str,
    progress: JobProgress | None,
) -> GoldImportOutcome:
    documents = gold.documents
    stored = document_states_by_external_id(
        project=project, external_ids=(document.external_id for document in documents)
    )
    text_fills, name_fills = _check_texts(documents, stored)
    attribute_ids, skipped_warnings = _attribute_ids(project, gold)
    # Filling in a missing text or name changes no gold: it is done even when the gold is unchanged.
    Document.objects.bulk_update(text_fills, ["text", "content_hash"], batch_size=500)
    Document.objects.bulk_update(name_fills, ["name"], batch_size=500)
    current = gold_version_current(project=project, kind=gold.kind)
    new_documents = [document for document in documents if document.external_id not in stored]
    if current is not None and not new_documents and _same_gold(current, documents, stored):
        result = {
            "unchanged": True,
            "kind": gold.kind,
            "gold_version": current.number,
            "documents": len(documents),
            "documents_updated": len(text_fills) + len(name_fills),
        }
        _report(progress, len(documents), len(documents), force=True)
        return GoldImportOutcome(result=result, warnings=skipped_warnings)

    total = 2 * len(documents)
    created = _documents_create(project, new_documents)
    # Progress counts each document once per phase: stored (created or found), then its gold written.
    done = len(documents)
    _report(progress, done, total)
    ids = {external_id: state[0] for external_id, state in stored.items()}
    if new_documents:
        ids.update(document_states_lookup_ids(project, [document.external_id for document in new_documents]))

    version = GoldVersion.objects.create(
        project=project,
        kind=gold.kind,
        number=(current.number + 1) if current else 1,
        source=source[:500],
        content_hash="",
        annotator=gold.annotator,
        created_by=user,
    )
    bulk_insert(
        GoldVersionDocument,
        ["gold_version_id", "document_id", "content_hash"],
        ((version.pk, ids[document.external_id], document.gold_hash) for document in documents),
    )
    carried = (
        carry_over_gold(previous=current, version=version)
        if current is not None
        else {"documents": 0, "rows": 0}
    )
    rows = _gold_rows_write(version, gold, ids, attribute_ids, progress, done, total)
    _report(progress, total, total, force=True)

    counts = {
        "kind": gold.kind,
        "gold_version": version.number,
        "documents": len(documents) + carried["documents"],
        "documents_imported": len(documents),
        "documents_created": created,
        "documents_updated": len(text_fills) + len(name_fills),
        "documents_carried_over": carried["documents"],
        "rows_imported": rows,
        "rows_carried_over": carried["rows"],
    }
    version.content_hash = version_content_hash(version)
    version.counts = counts
    version.save(update_fields=["content_hash", "counts"])
    return GoldImportOutcome(result={"unchanged": False, **counts}, warnings=skipped_warnings)


def _same_gold(current: GoldVersion, documents: list[ImportedDocument], stored: dict[str, tuple]) -> bool:
    """Whether every imported document's gold hash equals its hash in the current version."""
    current_hashes = gold_version_document_hashes(
        gold_version=current, document_ids=[state[0] for state in stored.values()]
    )
    return all(current_hashes.get(stored[d.external_id][0]) == d.gold_hash for d in documents)


def _documents_create(project: Project, new_documents: list[ImportedDocument]) -> int:
    """Insert the documents the project does not have yet; the number inserted."""
    now = timezone.now()
    return bulk_insert(
        Document,
        ["project_id", "external_id", "name", "text", "content_hash", "metadata", "created_at"],
        (
            (
                project.pk,
                document.external_id,
                document.name or "",
                document.text or "",
                Document.hash_text(document.text or ""),
                json_cell({}, "{}"),
                now,
            )
            for document in new_documents
        ),
    )


def _gold_rows_write(
    version: GoldVersion,
    gold: GoldImport,
    ids: dict[str, int],
    attribute_ids: dict[str, int],
    progress: JobProgress | None,
    done: int,
    total: int,
) -> int:
    """Insert the new version's gold spans or attribute values; the number of rows."""
    if gold.kind == GoldKind.SPANS:
        return bulk_insert(
            GoldSpan,
            ["gold_version_id", "document_id", "start", "end", "entity_type", "label"],
            _span_rows(version.pk, gold.documents, ids, progress, done, total),
        )
    return bulk_insert(
        GoldAttributeValue,
        [
            "gold_version_id",
            "document_id",
            "attribute_id",
            "output_data",
            "additional_text",
            "full_text_details",
            "citation_page",
            "citation_highlight_text",
        ],
        _value_rows(version.pk, gold.documents, ids, attribute_ids, progress, done, total),
    )


def document_states_lookup_ids(project: Project, external_ids: list[str]) -> dict[str, int]:
    return {
        external_id: state[0]
        for external_id, state in document_states_by_external_id(
            project=project, external_ids=external_ids
        ).items()
    }


def _check_texts(
    documents: list[ImportedDocument], stored: dict[str, tuple[int, str, str]]
) -> tuple[list[Document], list[Document]]:
    """(text fills, name fills) for stored documents without text or name; raise on a changed text."""
    problems = []
    text_fills: list[Document] = []
    name_fills: list[Document] = []
    for document in documents:
        state = stored.get(document.external_id)
        if state is None:
            continue
        pk, content_hash, name = state
        if document.text is not None:
            text_hash = Document.hash_text(document.text)
            if text_hash != content_hash and content_hash != EMPTY_TEXT_HASH:
                problems.append(
                    ImportProblem(
                        "the document's text differs from the stored text of this document; a document's "
                        "text cannot change once imported (import it under a new document_id)",
                        document_id=document.external_id,
                        field="text",
                    )
                )
                continue
            if text_hash != content_hash:
                text_fills.append(Document(pk=pk, text=document.text, content_hash=text_hash))
        if document.name and not name:
            name_fills.append(Document(pk=pk, name=document.name))
    if problems:
        raise InputValidationError(problems)
    return text_fills, name_fills


def _attribute_ids(project: Project, gold: GoldImport) -> tuple[dict[str, int], list[dict]]:
    """attribute_id -> Attribute pk, dropping (with a warning each) values of unknown attributes."""
    if gold.kind != GoldKind.ATTRIBUTES:
        return {}, []
    known = dict(Attribute.objects.filter(project=project).values_list("attribute_id", "id"))
    unknown: dict[str, list[str]] = {}
    for document in gold.documents:
        for attribute_id in document.values:
            if attribute_id not in known:
                unknown.setdefault(attribute_id, []).append(document.external_id)
    if unknown and not known:
        raise InputValidationError(
            ImportProblem(
                "the project has no attributes yet: import the prompt CSV (format prompts_csv) first",
                field="attributes",
            )
        )
    warnings = [
        ImportProblem(
            f"attribute {attribute_id!r} is not in the project's schema; its values in {len(documents)} "
            "documents were skipped (import a prompt CSV that defines it, then import again)",
            field="attributes",
            documents=tuple(documents),
        ).as_dict()
        for attribute_id, documents in unknown.items()
    ]
    if unknown:
        # The hash must describe what is stored, or a re-import after adding the attribute would
        # look unchanged.
        for document in gold.documents:
            document.values = {key: value for key, value in document.values.items() if key in known}
            document.gold_hash = attribute_gold_hash(document.values)
    return known, warnings


def carry_over_gold(
    *, previous: GoldVersion, version: GoldVersion, removed_document_ids: Sequence[int] = ()
) -> dict[str, int]:
    """Copy the previous version's gold of documents this import does not mention, inside the database.

    `removed_document_ids`: documents left out of the new version altogether (`gold_documents_remove`).
    """
    quote = connection.ops.quote_name
    gvd = quote(GoldVersionDocument._meta.db_table)
    not_in_import = (
        f"NOT EXISTS (SELECT 1 FROM {gvd} mentioned WHERE mentioned.gold_version_id = %s "
        "AND mentioned.document_id = old.document_id)"
    )
    removed = [int(document_id) for document_id in removed_document_ids]
    if removed:
        # Integers only (checked above), so they are written into the query as they are.
        not_in_import += f" AND old.document_id NOT IN ({', '.join(map(str, removed))})"
    if version.kind == GoldKind.SPANS:
        table, columns = GoldSpan._meta.db_table, ["document_id", "start", "end", "entity_type", "label"]
    else:
        table = GoldAttributeValue._meta.db_table
        columns = [
            "document_id",
            "attribute_id",
            "output_data",
            "additional_text",
            "full_text_details",
            "citation_page",
            "citation_highlight_text",
        ]
    names = ", ".join(quote(column) for column in columns)
    old_names = ", ".join(f"old.{quote(column)}" for column in columns)
    with connection.cursor() as cursor:
        # Rows first, while the new version lists only this import's documents.
        cursor.execute(
            f"INSERT INTO {quote(table)} (gold_version_id, {names}) SELECT %s, {old_names} "
            f"FROM {quote(table)} old WHERE old.gold_version_id = %s AND {not_in_import}",
            [version.pk, previous.pk, version.pk],
        )
        rows = cursor.rowcount
        cursor.execute(
            f"INSERT INTO {gvd} (gold_version_id, document_id, content_hash) "
            f"SELECT %s, old.document_id, old.content_hash FROM {gvd} old "
            f"WHERE old.gold_version_id = %s AND {not_in_import}",
            [version.pk, previous.pk, version.pk],
        )
        documents = cursor.rowcount
    return {"documents": documents, "rows": rows}


def _span_rows(
    version_id: int,
    documents: list[ImportedDocument],
    ids: dict[str, int],
    progress: JobProgress | None,
    done: int,
    total: int,
) -> Iterator[tuple]:
    for index, document in enumerate(documents, start=1):
        document_id = ids[document.external_id]
        for span in document.spans:
            yield (version_id, document_id, span.start, span.end, span.entity_type, span.label)
        if index % 1000 == 0:
            _report(progress, done + index, total)


def _value_rows(
    version_id: int,
    documents: list[ImportedDocument],
    ids: dict[str, int],
    attribute_ids: dict[str, int],
    progress: JobProgress | None,
    done: int,
    total: int,
) -> Iterator[tuple]:
    for index, document in enumerate(documents, start=1):
        document_id = ids[document.external_id]
        for attribute_id, annotation in document.values.items():
            details = [
                {
                    "text": detail.text,
                    "item_document_id": detail.item_document_id,
                    "item_arm": detail.item_arm,
                }
                for detail in annotation.full_text_details
            ]
            citation = parse_citation(annotation.full_text_details)
            yield (
                version_id,
                document_id,
                attribute_ids[attribute_id],
                json_cell(annotation.output_data, json.dumps(annotation.output_data, ensure_ascii=False)),
                annotation.additional_text or "",
                json_cell(details, json.dumps(details, ensure_ascii=False)),
                (citation.page or "")[:CITATION_PAGE_MAX],
                citation.highlight_text or "",
            )
        if index % 1000 == 0:
            _report(progress, done + index, total)


def version_content_hash(version: GoldVersion) -> str:
    """Hash of the whole version: its documents' external ids and per-document gold hashes, sorted."""
    digest = hashlib.sha256()
    rows = (
        GoldVersionDocument.objects.filter(gold_version=version)
        .order_by("document__external_id")
        .values_list("document__external_id", "content_hash")
    )
    for external_id, content_hash in rows.iterator(chunk_size=10000):
        digest.update(f"{external_id}\t{content_hash}\n".encode())
    return digest.hexdigest()


def _report(progress: JobProgress | None, done: int, total: int, *, force: bool = False) -> None:
    if progress is not None:
        progress.set(done, total, force=force)
