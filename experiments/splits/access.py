"""Before acceptance, the documents the test set will come from are invisible: their gold, comparison rows
and metrics are not served by the API, written to exports or shown in the admin. Each refused attempt is
logged and leaves an `access_refused` SplitEvent, so an auditor sees who tried.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, QuerySet

from annotations.models import Document, EvaluationStrategy, Project, ProjectPhase
from experiments.models import Split, SplitAssignment, SplitEvent
from experiments.splits.audit import SplitAction, split_counts
from experiments.splits.errors import SplitAccessRefused

logger = logging.getLogger("experiments.splits")


def split_hides_documents(*, project: Project) -> bool:
    """True while some documents of the project are held back: dev_val_test before acceptance."""
    return project.strategy == EvaluationStrategy.DEV_VAL_TEST and project.phase != ProjectPhase.FINISHED


def split_hidden_documents(*, project: Project) -> QuerySet[Document]:
    """The documents whose gold, comparison rows and metrics no one may see now.

    Before acceptance: every document not in development or validation (the future test set, including
    documents imported after the draw). After acceptance, and under the null strategy: none.
    """
    if not split_hides_documents(project=project):
        return Document.objects.none()
    in_open_split = SplitAssignment.objects.filter(
        document=OuterRef("pk"), split__in=[Split.DEVELOPMENT, Split.VALIDATION]
    )
    return Document.objects.filter(project=project).exclude(Exists(in_open_split))


def split_hidden_documents_everywhere() -> QuerySet[Document]:
    """The hidden documents of every project: for views that list rows across projects (the admin)."""
    in_open_split = SplitAssignment.objects.filter(
        document=OuterRef("pk"), split__in=[Split.DEVELOPMENT, Split.VALIDATION]
    )
    open_projects = Project.objects.filter(strategy=EvaluationStrategy.DEV_VAL_TEST).exclude(
        phase=ProjectPhase.FINISHED
    )
    return Document.objects.filter(project__in=open_projects).exclude(Exists(in_open_split))


def split_hidden_external_ids(project: Project, external_ids: set[str]) -> set[str]:
    """Those of `external_ids` whose documents are hidden now (for redacting job problems)."""
    if not split_hides_documents(project=project):
        return set()
    hidden = split_hidden_documents(project=project).filter(external_id__in=external_ids)
    return set(hidden.values_list("external_id", flat=True))


def split_hidden_document_ids(*, project: Project) -> set[int]:
    """The pks of `split_hidden_documents`."""
    return set(split_hidden_documents(project=project).values_list("pk", flat=True))


def split_exclude_hidden(
    queryset: QuerySet, *, project: Project, document_field: str = "document"
) -> QuerySet:
    """`queryset` without the rows of hidden documents, e.g. gold spans or comparison rows.

    `document_field` is the path from the queryset's model to Document (`"run_document__document"`...).
    Filtering in the database keeps this one query whatever the number of documents.
    """
    if not split_hides_documents(project=project):
        return queryset
    return queryset.exclude(**{f"{document_field}__in": split_hidden_documents(project=project)})


def split_log_refused_access(
    *,
    project: Project,
    user: AbstractBaseUser | None,
    what: str,
    request_id: str = "",
    document_ids: Iterable[int] = (),
) -> SplitEvent:
    """Record one refused attempt to read hidden data (`what`: "gold", "comparison rows", "metrics"...).

    Call it outside any transaction that the refusal will roll back (views run in autocommit here), or
    the record goes with it.
    """
    document_ids = sorted(set(document_ids))
    external_ids = list(Document.objects.filter(pk__in=document_ids).values_list("external_id", flat=True))
    username = getattr(user, "username", "") or "anonymous"
    logger.warning(
        "split access refused: project=%s user=%s what=%s documents=%s request_id=%s",
        project.slug,
        username,
        what,
        external_ids,
        request_id,
    )
    return SplitEvent.objects.create(
        project=project,
        document_id=document_ids[0] if len(document_ids) == 1 else None,
        action=SplitAction.ACCESS_REFUSED,
        phase=project.phase,
        actor=user if user is not None and user.is_authenticated else None,
        reason=f"Refused to show {what} of documents held back for the test: {', '.join(external_ids) or '-'}.",
        request_id=request_id,
        counts_after=split_counts(project=project),
    )


def split_refuse_hidden_access(
    *,
    project: Project,
    user: AbstractBaseUser | None,
    document_ids: Iterable[int],
    what: str,
    request_id: str = "",
) -> None:
    """Raise SplitAccessRefused (403), after logging it, when any of `document_ids` is hidden."""
    hidden = set(document_ids) & split_hidden_document_ids(project=project)
    if not hidden:
        return
    split_log_refused_access(
        project=project, user=user, what=what, request_id=request_id, document_ids=hidden
    )
    raise SplitAccessRefused(
        f"The {what} of {len(hidden)} document(s) is hidden until the project's configuration is accepted.",
        details={"what": what, "hidden_documents": len(hidden)},
    )
