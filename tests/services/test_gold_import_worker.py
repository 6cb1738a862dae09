"""Imports run by a real Celery worker: all or nothing, whatever file of an upload is bad."""

from __future__ import annotations

import time

import pytest

from annotations.models import Document, GoldAttributeValue, GoldSpan, GoldVersion, Job, JobState
from annotations.services import import_job_create
from tests.services.test_gold_import_fixtures import (
    cas_export_zip,
    eppi_bytes,
    letters_jsonl,
    prompts_bytes,
    upload,
)

pytestmark = pytest.mark.worker


@pytest.fixture
def shared_media_root(monkeypatch, settings, tmp_path):
    """The worker is another process: it must find uploads where this process saves them."""
    monkeypatch.setenv("MEDIA_ROOT", str(tmp_path / "media"))
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def worker(shared_media_root, celery_worker_process):
    return celery_worker_process


def import_and_wait(project, user, name: str, content: bytes, timeout: float = 60) -> Job:
    job = import_job_create(project=project, user=user, upload=upload(name, content))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.state in (JobState.SUCCEEDED, JobState.FAILED):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job.pk} still {job.state} after {timeout} s")


def snapshot(project) -> dict:
    """Everything an import could change, as plain values."""
    return {
        "documents": sorted(
            Document.objects.filter(project=project).values_list("external_id", "content_hash", "name")
        ),
        "versions": sorted(
            GoldVersion.objects.filter(project=project).values_list("kind", "number", "content_hash")
        ),
        "spans": sorted(
            GoldSpan.objects.filter(gold_version__project=project).values_list(
                "gold_version__number", "document__external_id", "start", "end", "entity_type", "label"
            )
        ),
        "values": sorted(
            GoldAttributeValue.objects.filter(gold_version__project=project).values_list(
                "gold_version__number", "document__external_id", "attribute__attribute_id", "additional_text"
            )
        ),
    }


def test_a_cas_export_with_one_bad_file_fails_naming_it_and_changes_nothing(worker, project, alice):
    first = import_and_wait(project, alice, "letters.jsonl", letters_jsonl())
    assert first.state == JobState.SUCCEEDED, first.errors
    before = snapshot(project)

    failed = import_and_wait(project, alice, "export.zip", cas_export_zip(with_broken_file=True))

    assert failed.state == JobState.FAILED
    assert [error["file"] for error in failed.errors] == ["export.zip!annotation/letter-9.txt/alice.json"]
    assert snapshot(project) == before

    fixed = import_and_wait(project, alice, "export.zip", cas_export_zip())

    assert fixed.state == JobState.SUCCEEDED, fixed.errors
    assert fixed.result["gold_version"] == 2
    assert fixed.progress_done == fixed.progress_total > 0
    assert snapshot(project)["spans"][: len(before["spans"])] == before["spans"]  # version 1 as it was


def test_a_worker_imports_the_schema_then_an_eppi_export(worker, project, alice):
    schema = import_and_wait(project, alice, "prompts.csv", prompts_bytes())
    assert schema.state == JobState.SUCCEEDED, schema.errors

    gold = import_and_wait(project, alice, "gold_eppi.json", eppi_bytes())

    assert gold.state == JobState.SUCCEEDED, gold.errors
    assert gold.result["documents_created"] == 4
    assert GoldAttributeValue.objects.filter(gold_version__project=project).count() == 10
