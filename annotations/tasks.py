"""Celery tasks of the annotations app. Tasks are thin: fetch by id, call a service."""

from __future__ import annotations

import socket

from celery import shared_task
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from annotations.models import Job, JobState
from annotations.services.imports import import_job_run
from annotations.services.purge import project_purge_run
from annotations.services.uploads import uploads_sweep


@shared_task(name="annotations.job_heartbeat")
def job_heartbeat(job_id: int) -> str:
    """Mark a job done by this worker: proves end to end that a worker reaches the database."""
    hostname = socket.gethostname()
    Job.objects.filter(pk=job_id).update(
        state=JobState.SUCCEEDED, result={"worker": hostname}, finished_at=timezone.now()
    )
    return hostname


# A database that is briefly unreachable (restart, failover) is worth retrying: the service claims the
# job first, so a retry of a job that did start finds it taken and does nothing.
@shared_task(
    name="annotations.import_job_run",
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def import_job_run_task(job_id: int) -> str:
    """Run an import job. Safe to deliver twice: the service claims the job before doing anything."""
    return import_job_run(job_id=job_id)


@shared_task(name="annotations.uploads_sweep")
def uploads_sweep_task() -> dict[str, int]:
    """Delete the uploads past their retention (for a periodic schedule; see docs/data-lifecycle.md)."""
    return uploads_sweep()


@shared_task(
    name="annotations.project_purge",
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def project_purge_task(job_id: int) -> str:
    """Run a project's purge job (claimed first, so a second delivery does nothing)."""
    return project_purge_run(job_id=job_id)
