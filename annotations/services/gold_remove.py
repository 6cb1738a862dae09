"""Remove documents from the gold: a new gold version, like any other gold change (see gold_import).

Version n+1 of a kind = version n without the removed documents; earlier versions keep their rows
and stay readable, and the scores that name them do not change. The documents themselves stay (older
versions and runs point at them); purging a project is what deletes documents and their text.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.models import Document, GoldVersion, GoldVersionDocument, Project
from annotations.selectors.gold import gold_versions_current
from annotations.services.gold_import import carry_over_gold, version_content_hash

MAX_DOCUMENTS_PER_REMOVAL = 10_000


@transaction.atomic
def gold_documents_remove(
    *, project: Project, external_ids: Sequence[str], user: AbstractBaseUser | None = None
) -> list[dict]:
    """Make a new gold version, of each kind whose current version holds some of the documents,
    without them. Returns each new version's counts. ValidationError (nothing written) for an
    unknown document id, or when no current version holds any of them.
    """
    wanted = list(dict.fromkeys(external_ids))
    if not wanted:
        raise ValidationError({"document_ids": "give at least one document id"})
    if len(wanted) > MAX_DOCUMENTS_PER_REMOVAL:
        raise ValidationError({"document_ids": f"at most {MAX_DOCUMENTS_PER_REMOVAL} documents at a time"})
    # One gold change per project at a time, as for imports.
    Project.objects.select_for_update().get(pk=project.pk)
    ids = dict(
        Document.objects.filter(project=project, external_id__in=wanted).values_list("external_id", "pk")
    )
    unknown = [external_id for external_id in wanted if external_id not in ids]
    if unknown:
        raise ValidationError(
            {"document_ids": [f"no document {external_id!r} in this project" for external_id in unknown[:20]]}
        )
    outcomes = []
    for current in sorted(gold_versions_current(project=project), key=lambda version: version.kind):
        present = list(
            GoldVersionDocument.objects.filter(
                gold_version=current, document_id__in=ids.values()
            ).values_list("document_id", flat=True)
        )
        if present:
            outcomes.append(_version_without(current, present, user))
    if not outcomes:
        raise ValidationError({"document_ids": "none of these documents is in the current gold"})
    return outcomes


def _version_without(current: GoldVersion, removed: list[int], user: AbstractBaseUser | None) -> dict:
    version = GoldVersion.objects.create(
        project_id=current.project_id,
        kind=current.kind,
        number=current.number + 1,
        source=f"removed {len(removed)} document(s) from version {current.number}",
        content_hash="",
        annotator=current.annotator,
        created_by=user,
    )
    carried = carry_over_gold(previous=current, version=version, removed_document_ids=removed)
    counts = {
        "kind": current.kind,
        "gold_version": version.number,
        "documents": carried["documents"],
        "documents_removed": len(removed),
        "rows_carried_over": carried["rows"],
    }
    version.content_hash = version_content_hash(version)
    version.counts = counts
    version.save(update_fields=["content_hash", "counts"])
    return counts
