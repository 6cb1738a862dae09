"""Purging a project: its documents, gold, runs, results, jobs and files go; an audit record stays.

The annotated set is patient data, so its owner (the project's creator) or a superuser can delete all
of it. `project_purge_request` checks the confirmation (the project's slug), writes the audit record
(`ProjectPurge`: who, when, slug; no content) and queues a purge job; `project_purge_run` is what the
task calls. It claims the job (`annotations.services.jobs`: heartbeat, retry after a database error,
reclaimed by the dispatcher if its worker dies), detaches the job from the project (so both outlive
it), deletes the rows, then the uploaded files once the deletion is committed, and finishes the job
with the counts (`job_finish`), writing them on the audit record in the same transaction. The log says
who purged which slug and how many rows went, never any content. A file left behind by a worker that
died between the two steps belongs to no job any more: `uploads_sweep` deletes it as an orphan.

The rows go through Django's deletion collector (every cascade of every app, without this app
importing the apps above it): first the project's runs, whose scorings protect the gold versions
they name, then the project itself.
"""

from __future__ import annotations

import logging
from collections import Counter

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from annotations.models import Job, JobKind, JobState, Membership, Project, ProjectPurge
from annotations.services.job_problems import internal_error
from annotations.services.jobs import (
    TRANSIENT_DATABASE_ERRORS,
    job_enqueue,
    job_finish,
    job_running,
)

logger = logging.getLogger(__name__)


def project_get_for_purge(*, user: AbstractBaseUser, slug: str) -> Project:
    """The project, when `user` may purge it: its creator or a superuser.

    A non-member (not a superuser) gets Http404, as for a project that does not exist; another
    member gets PermissionDenied.
    """
    project = Project.objects.filter(slug=slug).first()
    if project is None or not user.is_authenticated:
        raise Http404("No such project.")
    if user.is_superuser:
        return project
    if not Membership.objects.filter(project=project, user=user).exists():
        raise Http404("No such project.")
    if project.created_by_id != user.pk:
        raise PermissionDenied("Only the project's owner (its creator) or a superuser can purge it.")
    return project


@transaction.atomic
def project_purge_request(*, project: Project, user: AbstractBaseUser, confirm: str) -> Job:
    """Queue the purge of `project`, confirmed by its slug; ValidationError when the slug differs."""
    if confirm != project.slug:
        raise ValidationError({"confirm": f"type the project's slug ({project.slug!r}) to confirm the purge"})
    job = Job.objects.create(
        kind=JobKind.PURGE,
        project=project,
        created_by=user,
        params={"slug": project.slug, "project_id": project.pk},
    )
    ProjectPurge.objects.create(
        slug=project.slug,
        project_id_purged=project.pk,
        requested_by=user,
        requested_by_username=user.get_username(),
        job=job,
    )
    logger.info("purge of project %s requested by user %s (job %s)", project.slug, user.pk, job.pk)
    job_enqueue(job)
    return job


def project_purge_run(*, job_id: int, resume_token: str | None = None) -> str:
    """Run a purge job to its end; returns the job's state, or "skipped" when it was not claimed.

    A database error propagates as JobInterrupted, for the task to retry (`run_job_task`).
    """
    with job_running(job_id=job_id, kind=JobKind.PURGE, resume_token=resume_token) as job:
        if job is None:
            return "skipped"
        slug = job.params["slug"]
        try:
            counts, files = _purge_rows(job)
        except TRANSIENT_DATABASE_ERRORS:
            raise
        except Exception:
            # Nothing was deleted (one transaction); the traceback is for the operators, by its id.
            problem = internal_error(job_id, log=logger)
            problem["message"] = f"the purge failed and deleted nothing ({problem['message']})"
            job_finish(job_id=job_id, state=JobState.FAILED, claim_token=job.claim_token, errors=[problem])
            return JobState.FAILED
        files_deleted = _delete_files(files)
        summary = {
            "rows": dict(sorted(counts.items())),
            "rows_total": sum(counts.values()),
            "files": files_deleted,
        }
        with transaction.atomic():
            finished = job_finish(
                job_id=job_id, state=JobState.SUCCEEDED, claim_token=job.claim_token, result=summary
            )
            # A record already finished (the project was purged by an earlier attempt) keeps its counts.
            if finished:
                ProjectPurge.objects.filter(job_id=job_id, finished_at__isnull=True).update(
                    counts=summary, finished_at=timezone.now()
                )
    if not finished:
        return "skipped"  # the claim was lost (the dispatcher re-queued the job): the next attempt ends it
    logger.info(
        "project %s purged (job %s): %s rows and %s files deleted",
        slug,
        job_id,
        summary["rows_total"],
        files_deleted,
    )
    return JobState.SUCCEEDED


@transaction.atomic
def _purge_rows(job: Job) -> tuple[Counter[str], list[tuple]]:
    """Delete the project's rows in one transaction; return the counts and the files to delete after."""
    project = Project.objects.select_for_update().filter(pk=job.params["project_id"]).first()
    if project is None:  # purged by an earlier attempt
        return Counter(), []
    # Detached first: the job and its record outlive the project they purge.
    Job.objects.filter(pk=job.pk).update(project=None)
    files = [
        (upload.input_file.storage, upload.input_file.name)
        for upload in Job.objects.filter(project=project).exclude(input_file="")
    ]
    return _delete_rows(project), files


def _delete_rows(project: Project) -> Counter[str]:
    counts: Counter[str] = Counter()
    # Runs first: their scorings protect (PROTECT) the gold versions they were scored against.
    _, by_model = project.runs.all().delete()
    counts.update(by_model)
    _, by_model = project.delete()
    counts.update(by_model)
    return Counter({label: count for label, count in counts.items() if count})


def _delete_files(files: list[tuple]) -> int:
    deleted = 0
    for storage, name in files:
        if storage.exists(name):
            storage.delete(name)
            deleted += 1
    return deleted
