"""POST /api/v1/jobs/{id}/retry/: a manager queues a failed or stale job again; it runs once more."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotations.models import Job, JobState
from experiments.models import ExperimentRun
from metrics.models import Scoring
from tests.api.runs_support import (
    finalize,
    posted_extraction_run,
)
from tests.services.test_gold_import_fixtures import letters_jsonl, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def failed_import(project, alice, settings, tmp_path) -> Job:
    """An import that failed for a reason now gone (the worker's database vanished mid-way, say)."""
    settings.MEDIA_ROOT = tmp_path
    job = Job(
        kind="import",
        project=project,
        created_by=alice,
        state=JobState.FAILED,
        attempts=5,
        params={"format": "auto", "file_name": "letters.jsonl"},
        errors=[{"message": "internal error 0123; see the worker log"}],
    )
    job.input_file.save("retry/letters.jsonl", upload("letters.jsonl", letters_jsonl()), save=False)
    job.save()
    return job


def test_a_manager_retries_a_failed_import_and_it_runs_again(
    failed_import, alice_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(f"/api/v1/jobs/{failed_import.pk}/retry/")

    assert response.status_code == 202
    assert response.json()["status"] == "queued"
    assert response.json()["errors"] == []
    job = alice_client.get(f"/api/v1/jobs/{failed_import.pk}/").json()
    assert (job["status"], job["attempts"]) == ("succeeded", 1)
    assert job["result"]["documents_created"] == 3


def test_a_viewer_may_not_retry_and_an_outsider_gets_404(failed_import, bob_client, charlie_client):
    assert bob_client.post(f"/api/v1/jobs/{failed_import.pk}/retry/").status_code == 403
    assert charlie_client.post(f"/api/v1/jobs/{failed_import.pk}/retry/").status_code == 404
    assert Job.objects.get(pk=failed_import.pk).state == JobState.FAILED


def test_a_job_that_runs_or_succeeded_is_not_retried(failed_import, alice_client):
    Job.objects.filter(pk=failed_import.pk).update(state=JobState.RUNNING, heartbeat_at=timezone.now())
    assert alice_client.post(f"/api/v1/jobs/{failed_import.pk}/retry/").status_code == 409

    Job.objects.filter(pk=failed_import.pk).update(state=JobState.SUCCEEDED)
    response = alice_client.post(f"/api/v1/jobs/{failed_import.pk}/retry/")
    assert response.status_code == 409
    assert "only a failed job" in response.json()["detail"]


def test_a_running_job_whose_worker_went_silent_is_retried(
    failed_import, alice_client, settings, django_capture_on_commit_callbacks
):
    silent_since = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 5)
    Job.objects.filter(pk=failed_import.pk).update(
        state=JobState.RUNNING, claim_token="dead", heartbeat_at=silent_since
    )

    with django_capture_on_commit_callbacks(execute=True):
        assert alice_client.post(f"/api/v1/jobs/{failed_import.pk}/retry/").status_code == 202

    assert Job.objects.get(pk=failed_import.pk).state == JobState.SUCCEEDED


def test_an_import_whose_upload_is_gone_is_not_retried(failed_import, alice_client):
    failed_import.input_file.delete(save=False)

    response = alice_client.post(f"/api/v1/jobs/{failed_import.pk}/retry/")

    assert response.status_code == 409
    assert "upload the file again" in response.json()["detail"]


def test_a_failed_scoring_is_retried_and_its_run_is_scored_once(
    project, alice_client, django_capture_on_commit_callbacks
):
    run = posted_extraction_run(
        project, alice_client, config={"custom_evaluation_metrics": ["no_such_metric"]}
    )
    with django_capture_on_commit_callbacks(execute=True):
        job_id = finalize(alice_client, run["id"])["job"]["id"]
    assert alice_client.get(f"/api/v1/runs/{run['id']}/").json()["status"] == "failed"
    ExperimentRun.objects.filter(pk=run["id"]).update(config={})

    with django_capture_on_commit_callbacks(execute=True):
        assert alice_client.post(f"/api/v1/jobs/{job_id}/retry/").status_code == 202

    assert alice_client.get(f"/api/v1/runs/{run['id']}/").json()["status"] == "scored"
    assert Scoring.objects.filter(run_id=run["id"]).count() == 1
    # Once scored, the run is rescored, not its old job retried.
    Job.objects.filter(pk=job_id).update(state=JobState.FAILED)
    assert alice_client.post(f"/api/v1/jobs/{job_id}/retry/").status_code == 409
