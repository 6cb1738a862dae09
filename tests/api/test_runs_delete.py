"""DELETE /api/v1/runs/{id}/: alice (manager) deletes a run with its predictions and results; bob
(viewer) may not; charlie gets 404; the final test result is never deleted."""

from __future__ import annotations

import pytest

from annotations.models import Job
from experiments.models import ExperimentRun, PredictedValue, RunDocument, RunStage, RunStatus
from metrics.models import ComparisonRow, MetricValue, Scoring
from tests.api.runs_support import (
    finalize,
    posted_extraction_run,
)
from tests.splits.conftest import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored_run(project, alice_client, django_capture_on_commit_callbacks) -> dict:
    run = posted_extraction_run(project, alice_client)
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])
    return run


def test_alice_deletes_a_run_with_its_predictions_results_and_jobs(scored_run, alice_client):
    run_id = scored_run["id"]
    assert ComparisonRow.objects.filter(run_id=run_id).exists()

    response = alice_client.delete(f"/api/v1/runs/{run_id}/")

    assert response.status_code == 204
    assert alice_client.get(f"/api/v1/runs/{run_id}/").status_code == 404
    assert not ExperimentRun.objects.filter(pk=run_id).exists()
    assert not RunDocument.objects.filter(run_id=run_id).exists()
    assert not PredictedValue.objects.exists()
    assert not Scoring.objects.exists()
    assert not MetricValue.objects.exists()
    assert not ComparisonRow.objects.exists()
    assert not Job.objects.filter(kind="scoring").exists()


def test_bob_the_viewer_may_not_delete_a_run_and_charlie_gets_404(scored_run, bob_client, charlie_client):
    assert bob_client.delete(f"/api/v1/runs/{scored_run['id']}/").status_code == 403
    assert charlie_client.delete(f"/api/v1/runs/{scored_run['id']}/").status_code == 404
    assert ExperimentRun.objects.filter(pk=scored_run["id"]).exists()


def test_the_final_test_result_cannot_be_deleted(project, alice_client):
    final = make_run(project, stage=RunStage.TEST, is_final=True)

    response = alice_client.delete(f"/api/v1/runs/{final.pk}/")

    assert response.status_code == 409
    assert response.json()["code"] == "test_result_final"
    assert ExperimentRun.objects.filter(pk=final.pk).exists()


def test_a_run_being_scored_cannot_be_deleted(project, alice_client):
    scoring = make_run(project, stage=RunStage.ALL, status=RunStatus.SCORING)

    response = alice_client.delete(f"/api/v1/runs/{scoring.pk}/")

    assert response.status_code == 409
    assert ExperimentRun.objects.filter(pk=scoring.pk).exists()


def test_deleting_a_run_leaves_the_other_runs_alone(scored_run, project, alice_client):
    other = make_run(project, stage=RunStage.ALL, name="kept")

    assert alice_client.delete(f"/api/v1/runs/{scored_run['id']}/").status_code == 204

    assert ExperimentRun.objects.filter(pk=other.pk).exists()
