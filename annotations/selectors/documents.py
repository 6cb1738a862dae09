"""Reads of a project's documents. Callers have already authorised the project (selectors.projects)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection
from django.db.models import Exists, OuterRef, QuerySet

from annotations.models import Document, GoldVersionDocument, Project
from annotations.selectors.gold import gold_versions_current

# An IN list this long stays well under every database's parameter limit and query-size sweet spot.
LOOKUP_CHUNK = 5000


def document_list(
    *,
    project: Project,
    external_id: str | None = None,
    name_contains: str | None = None,
    has_gold: bool | None = None,
    include_text: bool = False,
) -> QuerySet[Document]:
    """The project's documents, filtered; without their text unless asked (texts can be megabytes).

    `has_gold` means: covered by the current gold version of either kind (spans or attributes).
    """
    documents = Document.objects.filter(project=project)
    if not include_text:
        documents = documents.defer("text")
    if external_id:
        documents = documents.filter(external_id=external_id)
    if name_contains:
        documents = documents.filter(name__icontains=name_contains)
    if has_gold is not None:
        current = [version.pk for version in gold_versions_current(project=project)]
        in_gold = Exists(
            GoldVersionDocument.objects.filter(gold_version_id__in=current, document_id=OuterRef("pk"))
        )
        documents = documents.filter(in_gold if has_gold else ~in_gold)
    return documents


def document_ids_by_external_id(*, project: Project, external_ids: Iterable[str]) -> dict[str, int]:
    """external_id -> primary key for those of `external_ids` that exist in `project`.

    For posting predictions and scoring: a batch of thousands of ids costs a query per 5,000.
    """
    wanted = list(dict.fromkeys(external_ids))
    found: dict[str, int] = {}
    for index in range(0, len(wanted), LOOKUP_CHUNK):
        chunk = wanted[index : index + LOOKUP_CHUNK]
        found.update(
            Document.objects.filter(project=project, external_id__in=chunk).values_list("external_id", "id")
        )
    return found


def document_states_by_external_id(
    *, project: Project, external_ids: Iterable[str]
) -> dict[str, tuple[int, str, str]]:
    """external_id -> (id, content_hash, name) without loading texts: what an import compares against."""
    wanted = list(dict.fromkeys(external_ids))
    found: dict[str, tuple[int, str, str]] = {}
    if not wanted:
        return found
    if connection.vendor == "postgresql":
        # One query with one array parameter: an import asks for 100,000 ids at once, and binding them
        # as a single array is far cheaper than thousands of IN placeholders.
        table = connection.ops.quote_name(Document._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT external_id, id, content_hash, name FROM {table} "
                "WHERE project_id = %s AND external_id = ANY(%s)",
                [project.pk, wanted],
            )
            for external_id, pk, content_hash, name in cursor.fetchall():
                found[external_id] = (pk, content_hash, name)
        return found
    for index in range(0, len(wanted), LOOKUP_CHUNK):
        rows = Document.objects.filter(
            project=project, external_id__in=wanted[index : index + LOOKUP_CHUNK]
        ).values_list("external_id", "id", "content_hash", "name")
        for external_id, pk, content_hash, name in rows:
            found[external_id] = (pk, content_hash, name)
    return found
