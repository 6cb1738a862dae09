"""Uploads are patient data: deleted when their import job ends, or once UPLOAD_RETENTION_HOURS have
passed after it, by a sweep that runs at every job's end, in every worker's dispatcher and from
`manage.py purge_uploads`. A failed import whose upload is gone cannot be retried."""

from __future__ import annotations

import io
import os
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotations.dispatcher import uploads_sweep_when_due
from annotations.models import Job, JobState
from annotations.services.imports import import_job_create
from annotations.services.jobs import JobNotRetryable, job_retry
from annotations.services.uploads import uploads_sweep
from tests.services.test_gold_import_fixtures import letters_jsonl, media_root, upload  # noqa: F401

pytestmark = pytest.mark.usefixtures("media_root")


def files_under(root: Path) -> list[Path]:
    return [path for path in Path(root).rglob("*") if path.is_file()]


def run_import(project, user, content: bytes, captured) -> Job:
    with captured(execute=True):
        job = import_job_create(project=project, user=user, upload=upload("letters.jsonl", content))
    return Job.objects.get(pk=job.pk)


def test_the_upload_is_deleted_when_its_job_succeeds(
    project, alice, settings, django_capture_on_commit_callbacks
):
    job = run_import(project, alice, letters_jsonl(), django_capture_on_commit_callbacks)

    assert job.state == JobState.SUCCEEDED
    assert job.input_file.name == ""
    assert "upload_removed_at" in job.params
    assert files_under(settings.MEDIA_ROOT) == []


def test_the_upload_is_deleted_when_its_job_fails(
    project, alice, settings, django_capture_on_commit_callbacks
):
    job = run_import(project, alice, b'{"document_id": "d1"}\n', django_capture_on_commit_callbacks)

    assert job.state == JobState.FAILED
    assert job.errors
    assert files_under(settings.MEDIA_ROOT) == []


def test_with_a_retention_the_upload_stays_until_the_sweep_after_it(
    project, alice, settings, django_capture_on_commit_callbacks
):
    settings.UPLOAD_RETENTION_HOURS = 24
    job = run_import(project, alice, letters_jsonl(), django_capture_on_commit_callbacks)
    assert len(files_under(settings.MEDIA_ROOT)) == 1

    assert uploads_sweep(now=timezone.now() + timedelta(hours=23)) == {"job_files": 0, "orphans": 0}
    assert len(files_under(settings.MEDIA_ROOT)) == 1
    assert uploads_sweep(now=timezone.now() + timedelta(hours=25))["job_files"] == 1

    assert files_under(settings.MEDIA_ROOT) == []
    job.refresh_from_db()
    assert job.input_file.name == ""


def test_the_next_jobs_end_sweeps_an_earlier_upload_past_its_retention(
    project, alice, settings, django_capture_on_commit_callbacks
):
    settings.UPLOAD_RETENTION_HOURS = 1
    first = run_import(project, alice, letters_jsonl(), django_capture_on_commit_callbacks)
    Job.objects.filter(pk=first.pk).update(finished_at=timezone.now() - timedelta(hours=2))

    run_import(project, alice, letters_jsonl(), django_capture_on_commit_callbacks)

    first.refresh_from_db()
    assert first.input_file.name == ""
    assert len(files_under(settings.MEDIA_ROOT)) == 1  # the second job's, within its hour


def test_purge_uploads_deletes_orphaned_files_once_they_are_old(project, settings):
    settings.UPLOAD_RETENTION_HOURS = 0
    folder = Path(settings.MEDIA_ROOT, "job-inputs", "2026", "11", "abc")
    folder.mkdir(parents=True)
    old, young = folder / "old.jsonl", folder / "young.jsonl"
    old.write_text("patient text")
    young.write_text("patient text")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    out = io.StringIO()

    call_command("purge_uploads", stdout=out)

    assert not old.exists()
    assert young.exists()  # an upload whose request may still be running
    assert "1 orphaned file(s) deleted" in out.getvalue()


def test_the_dispatcher_sweeps_when_due_and_not_at_every_pass(
    project, alice, settings, django_capture_on_commit_callbacks
):
    settings.UPLOAD_RETENTION_HOURS = 1
    settings.UPLOADS_SWEEP_SECONDS = 600
    job = run_import(project, alice, letters_jsonl(), django_capture_on_commit_callbacks)
    Job.objects.filter(pk=job.pk).update(finished_at=timezone.now() - timedelta(hours=2))

    swept_at = uploads_sweep_when_due(time.monotonic() - 60)
    assert len(files_under(settings.MEDIA_ROOT)) == 1  # swept a minute ago: not yet

    assert uploads_sweep_when_due(None) > swept_at
    assert files_under(settings.MEDIA_ROOT) == []
    job.refresh_from_db()
    assert job.input_file.name == ""


def test_a_failed_import_whose_upload_is_gone_cannot_be_retried(
    project, alice, settings, django_capture_on_commit_callbacks
):
    job = run_import(project, alice, b'{"document_id": "d1"}\n', django_capture_on_commit_callbacks)
    assert job.state == JobState.FAILED

    with pytest.raises(JobNotRetryable, match="UPLOAD_RETENTION_HOURS"):
        job_retry(job=job, user=alice)
