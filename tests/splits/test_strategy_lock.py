"""The strategy is chosen with the project and may change only until the first split is assigned."""

from __future__ import annotations

import pytest

from experiments.models import RunStage, RunStatus
from experiments.splits import SplitRuleViolation, split_assign_development, split_check_can_score
from tests.splits.conftest import make_run

URL = "/api/v1/projects/letters/"


def test_alice_switches_a_fresh_project_to_dev_val_test_and_back(project, alice_client):
    switched = alice_client.patch(URL, {"strategy": "dev_val_test"}, format="json")
    project.refresh_from_db()
    assert switched.status_code == 200
    assert (project.strategy, project.phase) == ("dev_val_test", "development")

    assert alice_client.patch(URL, {"strategy": "null"}, format="json").status_code == 200


def test_once_a_split_is_assigned_the_strategy_is_fixed(letters, alice, alice_client):
    split_assign_development(project=letters, actor=alice, document_ids=["letter-000"])

    response = alice_client.patch(URL, {"strategy": "null"}, format="json")

    assert response.status_code == 400
    assert "assigned to splits" in str(response.json()["strategy"])
    letters.refresh_from_db()
    assert letters.strategy == "dev_val_test"


def test_a_project_whose_runs_were_scored_on_every_document_cannot_hold_a_test_set_back(
    project, alice_client
):
    make_run(project, stage=RunStage.ALL, status=RunStatus.SCORED)

    response = alice_client.patch(URL, {"strategy": "dev_val_test"}, format="json")

    assert response.status_code == 400
    assert "scored on every document" in str(response.json()["strategy"])


def test_an_open_run_of_the_null_days_is_never_scored_under_dev_val_test(project, alice_client, alice):
    waiting = make_run(project, stage=RunStage.ALL, status=RunStatus.OPEN)
    assert alice_client.patch(URL, {"strategy": "dev_val_test"}, format="json").status_code == 200

    with pytest.raises(SplitRuleViolation) as refusal:
        split_check_can_score(run=waiting)
    assert refusal.value.code == "stage_all_under_dev_val_test"
