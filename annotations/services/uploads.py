"""Uploaded files are patient data: each is deleted once its import job has ended, or kept for
`UPLOAD_RETENTION_HOURS` after that and then deleted (docs/data-lifecycle.md).

Two ways a file goes, so that no one has to act:
- `upload_discard` at the end of every import job (succeeded or failed): with the default retention
  of 0 hours the job's own file goes at once; then `uploads_sweep` runs, for the files of earlier
  jobs whose retention has passed.
- `uploads_sweep()`, a plain function for anything periodic (the worker's dispatcher, cron through
  `manage.py purge_uploads`): deletes the files of ended jobs past their retention, and files in the
  upload folder that no job refers to (an upload whose request failed) once they are as old.

A job keeps its row, counts and problems; only `input_file` is emptied, and `params["upload_removed_at"]`
says when.
"""

from __future__ import annotations

import logging
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from annotations.models import Job, JobState

logger = logging.getLogger(__name__)

ENDED_STATES = (JobState.SUCCEEDED, JobState.FAILED)
# The folder of Job.input_file (its upload_to, without the dated subfolders).
UPLOAD_FOLDER = "job-inputs"
# An unreferenced file younger than this may belong to a request still being written: left alone.
ORPHAN_MIN_AGE = timedelta(hours=1)


def upload_retention() -> timedelta:
    return timedelta(hours=settings.UPLOAD_RETENTION_HOURS)


def upload_discard(*, job_id: int) -> bool:
    """Delete the upload of an ended job if its retention has passed (at once with a retention of 0).

    Returns True when a file was deleted. Safe to call twice and for a job without a file.
    """
    job = Job.objects.filter(pk=job_id, state__in=ENDED_STATES).exclude(input_file="").first()
    if job is None or job.finished_at is None:
        return False
    if job.finished_at + upload_retention() > timezone.now():
        return False
    return _remove_input_file(job)


def uploads_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Delete every upload past its retention, and orphaned files in the upload folder.

    Returns the counts: `{"job_files": n, "orphans": m}`.
    """
    now = now or timezone.now()
    expired = Job.objects.filter(state__in=ENDED_STATES, finished_at__lte=now - upload_retention()).exclude(
        input_file=""
    )
    job_files = sum(_remove_input_file(job) for job in expired.iterator())
    orphans = _remove_orphans(now=now)
    if job_files or orphans:
        logger.info("uploads sweep: %s job file(s) and %s orphaned file(s) deleted", job_files, orphans)
    return {"job_files": job_files, "orphans": orphans}


def _remove_input_file(job: Job) -> bool:
    name = job.input_file.name
    storage = job.input_file.storage
    removed = False
    if name and storage.exists(name):
        storage.delete(name)
        removed = True
    _remove_empty_parents(Path(settings.MEDIA_ROOT), Path(settings.MEDIA_ROOT, name).parent)
    params = {**job.params, "upload_removed_at": timezone.now().isoformat()}
    Job.objects.filter(pk=job.pk).update(input_file="", params=params)
    return removed


def _remove_orphans(*, now: datetime) -> int:
    root = Path(settings.MEDIA_ROOT, UPLOAD_FOLDER)
    if not root.is_dir():
        return 0
    referenced = {
        str(Path(settings.MEDIA_ROOT, name))
        for name in Job.objects.exclude(input_file="").values_list("input_file", flat=True)
    }
    cutoff = (now - max(upload_retention(), ORPHAN_MIN_AGE)).timestamp()
    # A file written while this sweep reads the jobs is younger than the cutoff, so never taken.
    removed = 0
    for folder, _, files in os.walk(root, topdown=False):
        for file_name in files:
            path = Path(folder, file_name)
            if str(path) not in referenced and path.stat().st_mtime < min(cutoff, time.time()):
                path.unlink(missing_ok=True)
                removed += 1
        _remove_empty_parents(root, Path(folder))
    return removed


def _remove_empty_parents(root: Path, folder: Path) -> None:
    """Remove `folder` and its parents up to (not including) `root` while they are empty."""
    root = root.resolve()
    folder = folder.resolve()
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
