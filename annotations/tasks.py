"""Celery tasks of the annotations app. Tasks are thin: fetch by id, call a service, retry on a
transient database error; `run_job_task` is that skeleton, shared by every app's job tasks."""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable

from celery import shared_task
from django.conf import settings
from django.db import connection

from annotations.models import Job, JobKind, JobState
from annotations.services.imports import import_job_retry_check, import_job_run
from annotations.services.job_problems import internal_error
from annotations.services.jobs import (
    TRANSIENT_DATABASE_ERRORS,
    JobInterrupted,
    job_claim,
    job_finish,
    job_kind_register,
)
from annotations.services.purge import project_purge_run
from annotations.services.uploads import uploads_sweep

logger = logging.getLogger("annotations.jobs")

# Test hook: seconds to sleep between reading and writing, so a test can break an import in the middle.
IMPORT_DELAY_ENV = "EVALPROJECT_TEST_IMPORT_DELAY"

# Backoff between retries after a database error, capped: a restart takes seconds, a failover a minute.
RETRY_BACKOFF_MAX_SECONDS = 30


@shared_task(name="annotations.job_heartbeat")
def job_worker_probe(job_id: int) -> str:
    """Finish a job in this worker: proves end to end that a worker reaches the database."""
    hostname = socket.gethostname()
    kind = Job.objects.filter(pk=job_id).values_list("kind", flat=True).first()
    job = job_claim(job_id=job_id, kind=kind) if kind else None
    if job is not None:
        job_finish(
            job_id=job_id, state=JobState.SUCCEEDED, claim_token=job.claim_token, result={"worker": hostname}
        )
    return hostname


def run_job_task(task, service: Callable[..., str], *, job_id: int, resume_token: str | None) -> str:
    """Run `service(job_id=..., resume_token=...)`; on a database error retry with backoff, resuming
    the job's claim, and after JOB_DATABASE_RETRIES retries fail the job with a clear error.

    A worker retries through the broker (the task is free meanwhile); in-process (the embedded
    default) there is no one to retry later, so the retry waits here.
    """
    retried_here = 0
    while True:
        try:
            return service(job_id=job_id, resume_token=resume_token)
        except (JobInterrupted, *TRANSIENT_DATABASE_ERRORS) as error:
            if isinstance(error, JobInterrupted):
                resume_token = error.claim_token
            if not connection.in_atomic_block:
                connection.close()  # it may be dead; the next query opens a new one
            retries = task.request.retries + retried_here
            if retries >= settings.JOB_DATABASE_RETRIES:
                return _fail_unreachable(job_id, resume_token, retries)
            countdown = min(2**retries, RETRY_BACKOFF_MAX_SECONDS)
            logger.warning("job %s: database error, retry %s in %s s", job_id, retries + 1, countdown)
            if not task.request.is_eager:
                raise task.retry(
                    kwargs={"job_id": job_id, "resume_token": resume_token},
                    countdown=countdown,
                    max_retries=settings.JOB_DATABASE_RETRIES,
                    exc=error,
                ) from error
            time.sleep(countdown)
            retried_here += 1


def _fail_unreachable(job_id: int, claim_token: str | None, retries: int) -> str:
    problem = internal_error(job_id)
    problem["message"] = f"the database could not be reached after {retries} retries ({problem['message']})"
    if claim_token is None:
        return "interrupted"  # not claimed: the job is still queued, and a dispatcher sends it again
    try:
        job_finish(job_id=job_id, state=JobState.FAILED, claim_token=claim_token, errors=[problem])
    except TRANSIENT_DATABASE_ERRORS:
        # Still unreachable: the job stays running, silent, and a dispatcher re-queues it.
        logger.exception("job %s: could not record its failure", job_id)
        return "interrupted"
    return JobState.FAILED


# ignore_result: the job row holds the outcome. It also spares sending a subscription to the result
# backend, which retries for 20 s when Redis is down; the API must answer at once.
@shared_task(bind=True, name="annotations.import_job_run", max_retries=None, ignore_result=True)
def import_job_run_task(self, job_id: int, resume_token: str | None = None) -> str:
    """Run an import job. Safe to deliver twice: the service claims the job before doing anything."""
    delay = float(os.environ.get(IMPORT_DELAY_ENV) or 0)

    def service(*, job_id: int, resume_token: str | None) -> str:
        return import_job_run(
            job_id=job_id,
            resume_token=resume_token,
            after_read=(lambda: time.sleep(delay)) if delay > 0 else None,
        )

    return run_job_task(self, service, job_id=job_id, resume_token=resume_token)


job_kind_register(JobKind.IMPORT, task=import_job_run_task, on_retry=import_job_retry_check)


# ignore_result: see import_job_run_task.
@shared_task(bind=True, name="annotations.project_purge", max_retries=None, ignore_result=True)
def project_purge_task(self, job_id: int, resume_token: str | None = None) -> str:
    """Run a project's purge job. Safe to deliver twice: the service claims the job first."""
    return run_job_task(self, project_purge_run, job_id=job_id, resume_token=resume_token)


job_kind_register(JobKind.PURGE, task=project_purge_task)


@shared_task(name="annotations.uploads_sweep", ignore_result=True)
def uploads_sweep_task() -> dict[str, int]:
    """Delete the uploads past their retention (the dispatcher also sweeps; docs/data-lifecycle.md)."""
    return uploads_sweep()
