"""The life of a job row: queued, claimed, beating, finished once; re-sent and reclaimed when lost.

The job row is the source of truth, the broker only a doorbell (a transactional outbox):
- `job_enqueue` sends the task's message after the commit. A broker that is down is logged, and the
  job stays `queued` with `enqueued_at` empty; the caller still gets its job.
- `job_claim` moves `queued -> running` with a conditional UPDATE and a new `claim_token`: of two
  deliveries of one message, one claims and the other does nothing. A task that retries after a
  database error resumes its own claim (the token it was given), and no other.
- `job_heartbeat` beats `heartbeat_at` from a small thread while the job runs in a worker.
- `jobs_dispatch` (every worker runs it, see annotations/dispatcher.py) sends the message of queued jobs
  that were never sent or not taken for JOB_REQUEUE_SECONDS, and re-queues running jobs whose worker
  has been silent for JOB_STALE_SECONDS, or fails them after JOB_MAX_ATTEMPTS. A job whose kind can
  resume it under the same claim (`on_silent`: a scoring fanned out over the workers sends its lost
  chunk tasks again) is resumed instead of re-queued. Every step is an
  `UPDATE ... WHERE state=... AND ...` on the row, so the dispatchers of several workers never act twice.
- `job_finish` is the one terminal transition (`succeeded` or `failed`): it writes the outcome only for
  the current claim, and sends `job_finished` after the commit.

Warnings and errors are stored in the one problem shape (`annotations.services.job_problems`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg
from django import db as django_db
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Greatest
from django.utils import timezone
from rest_framework import status
from rest_framework.exceptions import APIException

from annotations.importers.errors import ImportProblem
from annotations.models import Job, JobState
from annotations.services.job_problems import problems_capped
from annotations.signals import job_finished

logger = logging.getLogger("annotations.jobs")

# -- transient failures ----------------------------------------------------------------------------

# A database that is briefly unreachable (restart, failover). psycopg's own classes come from the
# side connection that reports progress (annotations.services.bulk.JobProgress).
TRANSIENT_DATABASE_ERRORS: tuple[type[Exception], ...] = (
    django_db.OperationalError,
    django_db.InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)


class JobClaimLost(Exception):
    """This worker was given up for dead and its job went on without it: what it wrote rolls back."""


class JobInterrupted(Exception):
    """The database went away while a claimed job ran: its task retries, resuming this claim."""

    def __init__(self, job_id: int, claim_token: str):
        super().__init__(f"job {job_id} interrupted by a database error")
        self.job_id = job_id
        self.claim_token = claim_token


# -- kinds: which task runs a job, and what its app does when it fails or is retried ---------------


class JobNotRetryable(APIException):
    """A retry of a job that is neither failed nor stale, or whose inputs are gone: 409."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "job_not_retryable"


@dataclass(frozen=True)
class JobKindHandler:
    task: Any  # the Celery task, called with the job id
    on_failed: Callable[[Job], None] | None = None  # inside job_finish's transaction
    on_retry: Callable[[Job], None] | None = None  # inside job_retry's; raises JobNotRetryable
    # Inside the dispatcher's transaction, the silent job's row locked: True when it resumes the job
    # under its current claim (sending what was lost after the commit), False to re-queue it.
    on_silent: Callable[[Job], bool] | None = None


_HANDLERS: dict[str, JobKindHandler] = {}


def job_kind_register(
    kind: str,
    *,
    task: Any,
    on_failed: Callable[[Job], None] | None = None,
    on_retry: Callable[[Job], None] | None = None,
    on_silent: Callable[[Job], bool] | None = None,
) -> None:
    """Called by each app's tasks module: annotations may not import the apps above it."""
    _HANDLERS[kind] = JobKindHandler(task=task, on_failed=on_failed, on_retry=on_retry, on_silent=on_silent)


def _handler(kind: str) -> JobKindHandler | None:
    # Each app's AppConfig.ready imports its tasks module, which registers its kinds.
    return _HANDLERS.get(kind)


# -- sending ---------------------------------------------------------------------------------------


def job_enqueue(job: Job) -> None:
    """Send the job's task once the current transaction commits (a worker must see the committed row)."""
    transaction.on_commit(lambda: _send(job.pk, job.kind))


def _send(job_id: int, kind: str) -> bool:
    """Send one message for the job; True when the broker took it. In the embedded default (no broker)
    the task runs here, in-process, and its errors propagate as any other code's."""
    handler = _handler(kind)
    if handler is None:
        logger.error("job %s: no task is registered for jobs of kind %r", job_id, kind)
        return False
    task = handler.task
    if task.app.conf.task_always_eager:
        task.delay(job_id)
        return True
    try:
        task.delay(job_id)
    except Exception as error:
        # The broker is down (or refused): the job stays queued and the dispatcher sends it later.
        logger.warning("job %s: could not send its task (%r); the dispatcher will send it", job_id, error)
        with contextlib.suppress(Exception):
            Job.objects.filter(pk=job_id, state=JobState.QUEUED).update(enqueued_at=None)
        return False
    Job.objects.filter(pk=job_id, state=JobState.QUEUED).update(enqueued_at=timezone.now())
    return True


# -- running ---------------------------------------------------------------------------------------


def job_claim(*, job_id: int, kind: str, resume_token: str | None = None) -> Job | None:
    """Claim the job for this worker: `queued -> running` with a new claim (one more attempt), or resume
    the `running` job whose claim is `resume_token` (its task retrying after a database error, the same
    attempt). None when the job is not this caller's: finished, or claimed by another delivery."""
    now = timezone.now()
    restart = {"started_at": now, "heartbeat_at": now, "progress_done": 0, "progress_total": 0}
    jobs = Job.objects.filter(pk=job_id, kind=kind)
    if resume_token and jobs.filter(state=JobState.RUNNING, claim_token=resume_token).update(**restart):
        return Job.objects.select_related("project", "created_by").get(pk=job_id)
    claimed = jobs.filter(state=JobState.QUEUED).update(
        state=JobState.RUNNING, claim_token=uuid.uuid4().hex, attempts=F("attempts") + 1, **restart
    )
    if not claimed:
        return None
    return Job.objects.select_related("project", "created_by").get(pk=job_id)


@contextlib.contextmanager
def job_heartbeat(job: Job) -> Iterator[None]:
    """Beat the job's `heartbeat_at` every JOB_HEARTBEAT_SECONDS from a thread while the block runs.

    A thread, because a scoring or an import spends minutes inside one library call or one transaction.
    Nothing beats in the embedded default: the job runs inside the request, and no dispatcher watches.
    """
    from evalproject.celery import app

    if app.conf.task_always_eager:
        yield
        return
    stop = threading.Event()
    thread = threading.Thread(
        target=_beat, args=(job.pk, job.claim_token, stop), name=f"job-{job.pk}-heartbeat", daemon=True
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


@contextlib.contextmanager
def job_running(*, job_id: int, kind: str, resume_token: str | None = None) -> Iterator[Job | None]:
    """The job claimed for the block (`job_claim`; None when it is not this caller's), its heartbeat
    beating; a database error inside becomes JobInterrupted for its claim, for the task to retry."""
    job = job_claim(job_id=job_id, kind=kind, resume_token=resume_token)
    if job is None:
        yield None
        return
    with job_heartbeat(job):
        try:
            yield job
        except TRANSIENT_DATABASE_ERRORS as error:
            raise JobInterrupted(job.pk, job.claim_token) from error


def _beat(job_id: int, token: str, stop: threading.Event) -> None:
    try:
        while not stop.wait(settings.JOB_HEARTBEAT_SECONDS):
            try:
                Job.objects.filter(pk=job_id, state=JobState.RUNNING, claim_token=token).update(
                    heartbeat_at=timezone.now()
                )
            except Exception:
                # The database is away (a restart): the next beat tries again on a new connection.
                logger.warning("job %s: heartbeat failed", job_id, exc_info=True)
                connection.close()
    finally:
        connection.close()


# -- finishing -------------------------------------------------------------------------------------


@transaction.atomic
def job_finish(
    *,
    job_id: int,
    state: str,
    claim_token: str,
    result: dict | None = None,
    warnings: Iterable[ImportProblem | dict | str] = (),
    errors: Iterable[ImportProblem | dict | str] = (),
    complete_progress: int | None = None,
) -> bool:
    """The one terminal transition: the job becomes `succeeded` or `failed` with its outcome.

    Only the holder of the current claim (`claim_token`) finishes a running job. A failed job's app is told
    (its `on_failed`, e.g. the run of a scoring fails too) in the same transaction, and `job_finished`
    is sent after the commit. `complete_progress`: the work done, shown as complete (a failed job
    shows where it stopped). Returns False, writing nothing, when the job was not this caller's to finish.
    """
    assert state in (JobState.SUCCEEDED, JobState.FAILED)
    jobs = Job.objects.filter(pk=job_id, state=JobState.RUNNING, claim_token=claim_token)
    fields: dict[str, Any] = {
        "state": state,
        "finished_at": timezone.now(),
        "result": result or {},
        "warnings": problems_capped(warnings, what="warnings"),
        "errors": problems_capped(errors, what="errors"),
    }
    if complete_progress is not None:
        # A finished job shows its work complete, whatever was last reported (writes are throttled).
        complete = Greatest(F("progress_total"), F("progress_done"), Value(complete_progress))
        fields["progress_total"] = fields["progress_done"] = complete
    if not jobs.update(**fields):
        return False
    job = Job.objects.get(pk=job_id)
    handler = _handler(job.kind)
    if state == JobState.FAILED and handler is not None and handler.on_failed is not None:
        handler.on_failed(job)
    transaction.on_commit(lambda: job_finished.send(sender=Job, job=job))
    return True


# -- recovering ------------------------------------------------------------------------------------


@dataclass
class DispatchReport:
    sent: int = 0
    requeued: int = 0
    resumed: int = 0
    failed: int = 0


def jobs_dispatch(*, now: datetime | None = None) -> DispatchReport:
    """One pass of the dispatcher (module doc). Safe to run in several workers at once."""
    now = now or timezone.now()
    report = DispatchReport()
    stale_before = now - timedelta(seconds=settings.JOB_STALE_SECONDS)
    stale = Job.objects.filter(state=JobState.RUNNING).filter(_last_sign_before(stale_before))
    for job_id, kind in stale.values_list("pk", "kind"):
        if _handler(kind) is None:
            continue
        outcome = _reclaim(job_id, stale_before=stale_before, now=now)
        if outcome == JobState.QUEUED:
            report.requeued += 1
            report.sent += _send(job_id, kind)
        elif outcome == JobState.RUNNING:
            report.resumed += 1
        elif outcome == JobState.FAILED:
            report.failed += 1
    unsent_before = now - timedelta(seconds=settings.JOB_DISPATCH_SECONDS)
    untaken_before = now - timedelta(seconds=settings.JOB_REQUEUE_SECONDS)
    due = Job.objects.filter(state=JobState.QUEUED).filter(
        Q(enqueued_at__isnull=True, created_at__lt=unsent_before) | Q(enqueued_at__lt=untaken_before)
    )
    for job_id, kind, enqueued_at in due.values_list("pk", "kind", "enqueued_at"):
        if _handler(kind) is None:
            continue
        # Take the send: of several dispatchers, the one whose UPDATE changed the row sends.
        if Job.objects.filter(pk=job_id, state=JobState.QUEUED, enqueued_at=enqueued_at).update(
            enqueued_at=now
        ) and _send(job_id, kind):
            report.sent += 1
    return report


@transaction.atomic
def _reclaim(job_id: int, *, stale_before: datetime, now: datetime) -> str | None:
    """Queue a silent running job again (or resume it, its kind's `on_silent`), or fail it after
    JOB_MAX_ATTEMPTS; None when it is not stale."""
    # skip_locked: a row that its worker holds locked (a scoring writing its results) is alive.
    job = (
        Job.objects.select_for_update(skip_locked=True)
        .filter(pk=job_id, state=JobState.RUNNING)
        .filter(_last_sign_before(stale_before))
        .first()
    )
    if job is None:
        return None
    if job.attempts >= settings.JOB_MAX_ATTEMPTS:
        stopped = (
            f"the job was stopped {job.attempts} times (its worker died or lost the database each time); "
            "see the worker log, then retry it"
        )
        job_finish(job_id=job_id, state=JobState.FAILED, claim_token=job.claim_token, errors=[stopped])
        logger.error("job %s failed after %s attempts", job_id, job.attempts)
        return JobState.FAILED
    handler = _handler(job.kind)
    if handler is not None and handler.on_silent is not None and handler.on_silent(job):
        # The same claim goes on: what its lost workers left undone is sent again, and the rest kept.
        Job.objects.filter(pk=job_id).update(heartbeat_at=now, attempts=F("attempts") + 1)
        logger.warning(
            "job %s: its workers stopped beating; its lost parts sent again (attempt %s)",
            job_id,
            job.attempts + 1,
        )
        return JobState.RUNNING
    Job.objects.filter(pk=job_id).update(state=JobState.QUEUED, enqueued_at=now, heartbeat_at=None)
    logger.warning("job %s: its worker stopped beating; queued again (attempt %s)", job_id, job.attempts)
    return JobState.QUEUED


def _last_sign_before(moment: datetime) -> Q:
    """The worker's last sign of life (its heartbeat, else its claim) is older than `moment`."""
    return Q(heartbeat_at__lt=moment) | Q(heartbeat_at__isnull=True, started_at__lt=moment)


# -- retrying --------------------------------------------------------------------------------------


@transaction.atomic
def job_retry(*, job: Job, user: AbstractBaseUser | None) -> Job:
    """Queue a failed or stale job again, with a fresh budget of attempts; raises JobNotRetryable.

    Stale: running with a worker silent for JOB_STALE_SECONDS, or queued and not taken for
    JOB_REQUEUE_SECONDS. The job's app checks that it can still run (its `on_retry`).
    """
    job = Job.objects.select_for_update().get(pk=job.pk)
    now = timezone.now()
    last_sign = job.heartbeat_at or job.started_at or job.created_at
    stale = (
        job.state == JobState.RUNNING and last_sign < now - timedelta(seconds=settings.JOB_STALE_SECONDS)
    ) or (
        job.state == JobState.QUEUED
        and (job.enqueued_at or job.created_at) < now - timedelta(seconds=settings.JOB_REQUEUE_SECONDS)
    )
    if job.state != JobState.FAILED and not stale:
        raise JobNotRetryable(
            f"Job {job.pk} is {job.state} and not stale: only a failed job, or one whose worker stopped, "
            "can be retried."
        )
    handler = _handler(job.kind)
    if handler is None:
        raise JobNotRetryable(f"Jobs of kind {job.kind!r} cannot be retried.")
    if handler.on_retry is not None:
        handler.on_retry(job)
    Job.objects.filter(pk=job.pk).update(
        state=JobState.QUEUED,
        claim_token="",
        attempts=0,
        progress_done=0,
        progress_total=0,
        result={},
        warnings=[],
        errors=[],
        started_at=None,
        finished_at=None,
        heartbeat_at=None,
        enqueued_at=None,
    )
    logger.info("job %s retried by %s", job.pk, getattr(user, "username", None) or "the system")
    job_enqueue(job)
    job.refresh_from_db()
    return job
