"""POST /runs/{id}/gate/: alice's team holds a run's latest scoring to a threshold document.

bob (viewer) may run the gate; charlie (outsider) gets 404. The verdict is in the body of a 200.
"""

from __future__ import annotations

import pytest

from annotations.models import Membership, Project
from annotations.roles import Role
from experiments.models import ExperimentRun
from tests.pipeline.intervals.scored_runs import metrics_json, scored_run

pytestmark = pytest.mark.django_db


def gate_url(run) -> str:
    return f"/api/v1/runs/{run.pk}/gate/"


ACCURACY_AT_LEAST_80 = {"checks": [{"metric": "accuracy", "attribute": "101", "min": 0.8}]}


def test_a_viewer_runs_the_gate_and_reads_every_check(project, bob_client):
    run = scored_run(project, metrics_json(0.9, 0.82, 0.96))

    response = bob_client.post(gate_url(run), ACCURACY_AT_LEAST_80, format="json")

    assert response.status_code == 200
    assert response.json() == {
        "passed": True,
        "checks": [
            {
                "index": 0,
                "metric": "accuracy",
                "attribute": "101",
                "on": "estimate",
                "comparison": ">=",
                "threshold": 0.8,
                "observed": 0.9,
                "passed": True,
                "reason": "0.9 meets >= 0.8",
                "baseline": None,
            }
        ],
    }


def test_a_failing_gate_is_still_a_200_with_the_verdict_in_the_body(project, bob_client):
    run = scored_run(project, metrics_json(0.9, 0.7, 0.96))
    thresholds = {"checks": [{"metric": "accuracy", "attribute": "101", "min": 0.8, "on": "lower_bound"}]}

    response = bob_client.post(gate_url(run), thresholds, format="json")

    assert response.status_code == 200
    assert response.json()["passed"] is False
    assert response.json()["checks"][0]["observed"] == 0.7


def test_a_null_metric_fails_its_check_with_the_reason(project, alice_client):
    run = scored_run(project, metrics_json(0.9, 0.82, 0.96, mae=None))
    thresholds = {"checks": [{"metric": "mean_absolute_error", "attribute": "103", "max": 2.0}]}

    body = alice_client.post(gate_url(run), thresholds, format="json").json()

    assert body["passed"] is False
    assert body["checks"][0]["reason"] == (
        "mean_absolute_error of attribute 103 is missing (metrics.json omits null metrics)"
    )


def test_non_inferiority_reads_the_baseline_runs_latest_scoring(project, bob_client):
    baseline = scored_run(project, metrics_json(0.92, 0.85, 0.97), name="baseline")
    candidate = scored_run(project, metrics_json(0.91, 0.84, 0.96), name="candidate")
    within = {
        "checks": [{"metric": "accuracy", "attribute": "101", "baseline": str(baseline.pk), "margin": 0.02}]
    }
    beyond = {
        "checks": [{"metric": "accuracy", "attribute": "101", "baseline": str(baseline.pk), "margin": 0.0}]
    }

    assert bob_client.post(gate_url(candidate), within, format="json").json()["passed"] is True
    check = bob_client.post(gate_url(candidate), beyond, format="json").json()["checks"][0]
    assert check["passed"] is False and check["threshold"] == 0.92


def test_a_baseline_the_user_cannot_read_fails_its_check(project, bob_client, charlie):
    elsewhere = Project.objects.create(name="Elsewhere", slug="elsewhere", created_by=charlie)
    Membership.objects.create(project=elsewhere, user=charlie, role=Role.MANAGER)
    hidden = scored_run(elsewhere, metrics_json(0.5, 0.4, 0.6), name="hidden")
    candidate = scored_run(project, metrics_json(0.9, 0.82, 0.96))
    thresholds = {"checks": [{"metric": "accuracy", "attribute": "101", "baseline": str(hidden.pk)}]}

    check = bob_client.post(gate_url(candidate), thresholds, format="json").json()["checks"][0]

    assert check["passed"] is False
    assert check["reason"] == f"baseline: baseline run {hidden.pk} was not supplied"


def test_an_outsider_gets_404(project, charlie_client):
    run = scored_run(project, metrics_json(0.9, 0.82, 0.96))

    response = charlie_client.post(gate_url(run), ACCURACY_AT_LEAST_80, format="json")

    assert response.status_code == 404


def test_a_malformed_threshold_document_is_a_400_naming_every_problem(project, bob_client):
    run = scored_run(project, metrics_json(0.9, 0.82, 0.96))
    thresholds = {"checks": [{"metric": "accuracy", "min": "high"}, {"attribute": "101", "max": 1}]}

    response = bob_client.post(gate_url(run), thresholds, format="json")

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_thresholds"
    assert body["problems"] == [
        "checks[0].min: must be a number",
        "checks[1].metric: required, a non-empty string",
    ]


def test_a_run_without_a_scoring_is_a_404_saying_so(project, bob_client):
    run = ExperimentRun.objects.create(project=project, name="open", kind="attributes", config_hash="h")

    response = bob_client.post(gate_url(run), ACCURACY_AT_LEAST_80, format="json")

    assert response.status_code == 404
    assert response.json()["code"] == "scoring_not_found"
