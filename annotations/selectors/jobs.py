"""Reads of jobs, scoped like everything else by the projects the user is a member of, and redacted.

A job's warnings and errors name documents (`document_id`, `documents`) and, in their messages, what
is in them (an unknown label). A document held back for the test may be named to no one while it is
held back, and documents move between splits after the job ran: so problems are redacted when read,
from their structured document fields, never only when written. Who holds back what is the splits'
rule (experiments), handed here by `register_hidden_documents` since annotations may not import it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404

from annotations.models import Job, Project
from annotations.roles import Role
from annotations.selectors.projects import project_check_role

HiddenDocuments = Callable[[Project, set[str]], set[str]]
"""(project, external ids) -> those of the ids whose documents are held back now."""

_hidden_documents: list[HiddenDocuments] = []

HELD_BACK = "a held-back document"


def register_hidden_documents(rule: HiddenDocuments) -> None:
    """Called once by the experiments app, whose splits decide which documents are held back."""
    _hidden_documents[:] = [rule]


def job_get_for_user(*, user: AbstractBaseUser, job_id: int, required: str = Role.VIEWER) -> Job:
    """A job of a project in which `user` has the `required` role, or one they started without a
    project; its problems redacted (`jobs_redacted`).

    A job of another project, or none, is Http404; a member whose role is too low (an auditor reads
    the split audit only) gets 403, exactly as for the project's job list.
    """
    if not user.is_authenticated:
        raise Http404("No such job.")
    job = Job.objects.filter(pk=job_id).select_related("project").first()
    if job is None or (job.project is None and job.created_by_id != user.pk):
        raise Http404("No such job.")
    if job.project is not None:
        project_check_role(user=user, project=job.project, required=required)
    return jobs_redacted([job])[0]


def job_list(*, project: Project) -> QuerySet[Job]:
    """The jobs of an (already authorised) project, newest first; redact a page with `jobs_redacted`."""
    return Job.objects.filter(project=project).select_related("project").order_by("-id")


def jobs_redacted(jobs: Sequence[Job]) -> list[Job]:
    """`jobs` with every problem that names a held-back document rewritten or withheld (in memory).

    One query per project on the page, and none for a project that holds nothing back.
    """
    jobs = list(jobs)
    if not _hidden_documents:
        return jobs
    named: dict[int, tuple[Project, set[str]]] = {}
    for job in jobs:
        if job.project is not None:
            ids = named.setdefault(job.project_id, (job.project, set()))[1]
            for problem in [*job.warnings, *job.errors]:
                ids.update(_documents_named(problem))
    hidden_by_project = {
        project_id: _hidden_documents[0](project, ids) if ids else set()
        for project_id, (project, ids) in named.items()
    }
    for job in jobs:
        hidden = hidden_by_project.get(job.project_id) or set()
        if hidden:
            job.warnings = problems_redacted(job.warnings, hidden)
            job.errors = problems_redacted(job.errors, hidden)
    return jobs


def problems_redacted(problems: Iterable[dict[str, Any]], hidden: set[str]) -> list[dict[str, Any]]:
    """`problems` naming none of the `hidden` documents.

    A problem about hidden documents only is withheld (its message may quote their labels or text),
    and counted in a last problem. One about visible documents too keeps its message, with each
    quoted hidden id replaced, and lists the visible documents only; should a hidden id still appear
    in its message, it is withheld as well.
    """
    shown = []
    withheld = 0
    for problem in problems:
        secret = _documents_named(problem) & hidden
        if not secret:
            shown.append(problem)
            continue
        visible = [document for document in problem.get("documents") or () if document not in hidden]
        message = str(problem.get("message", ""))
        for document in secret:
            message = message.replace(repr(document), HELD_BACK).replace(f'"{document}"', HELD_BACK)
        if problem.get("document_id") in hidden or not visible or any(d in message for d in secret):
            withheld += 1
            continue
        shown.append({**problem, "message": message, "documents": visible})
    if withheld:
        shown.append(
            {
                "message": f"{withheld} more problem(s) concern only documents held back for the test; "
                "they are shown once the project's configuration is accepted",
                "file": None,
                "line": None,
                "document_id": None,
                "field": None,
            }
        )
    return shown


def _documents_named(problem: Any) -> set[str]:
    if not isinstance(problem, dict):
        return set()
    named = {str(document) for document in problem.get("documents") or ()}
    if problem.get("document_id") is not None:
        named.add(str(problem["document_id"]))
    return named
