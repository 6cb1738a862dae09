"""GET /api/v1/projects/{slug}/splits/: the strategy, its phase and the documents per split."""

from __future__ import annotations

from experiments.splits import split_assign_development
from tests.conftest import token_client

URL = "/api/v1/projects/letters/splits/"


def test_bob_the_viewer_reads_the_split_status(letters, alice, bob_client):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)

    response = bob_client.get(URL)

    assert response.status_code == 200
    assert response.json() == {
        "strategy": "dev_val_test",
        "phase": "development",
        "chosen_config_hash": None,
        "current_stage": "development",
        "counts": {"development": 20, "validation": 0, "test": 0, "unassigned": 30},
        "documents": 50,
    }


def test_a_null_strategy_project_has_no_phase_and_evaluates_everything(project, bob_client):
    response = bob_client.get(URL)

    assert response.json() == {
        "strategy": "null",
        "phase": None,
        "chosen_config_hash": None,
        "current_stage": "all",
        "counts": {},
        "documents": 0,
    }


def test_dave_the_auditor_reads_the_status_too(letters, dave):
    assert token_client(dave).get(URL).status_code == 200


def test_charlie_the_outsider_gets_404(letters, charlie_client):
    assert charlie_client.get(URL).status_code == 404
