"""POST .../splits/development/, validation/, accept/ and reject/: alice moves documents, others cannot."""

from __future__ import annotations

import pytest

from annotations.models import Project
from experiments.models import RunStage, SplitEvent
from tests.conftest import token_client
from tests.splits.conftest import make_run

BASE = "/api/v1/projects/letters/splits"


def test_alice_draws_development_documents_with_a_seed(letters, alice_client):
    response = alice_client.post(
        f"{BASE}/development/", {"n": 20, "seed": 42, "reason": "first draw"}, format="json"
    )

    assert response.status_code == 200
    body = response.json()
    assert body["counts"]["development"] == 20
    assert len(body["moved"]) == 20
    again = alice_client.post(f"{BASE}/development/", {"n": 5, "seed": 42}, format="json").json()
    assert not set(again["moved"]) & set(body["moved"])


def test_the_event_carries_the_request_id_of_the_request_that_made_it(letters, alice_client):
    alice_client.post(
        f"{BASE}/development/", {"document_ids": ["letter-003"]}, format="json", HTTP_X_REQUEST_ID="req-42"
    )

    event = SplitEvent.objects.get(project=letters, document__external_id="letter-003")
    assert event.request_id == "req-42"
    assert event.actor.username == "alice"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"n": 3}, "seed"),
        ({}, "non_field_errors"),
        ({"n": 3, "seed": 1, "document_ids": ["letter-001"]}, "non_field_errors"),
    ],
)
def test_a_draw_needs_n_and_a_seed_or_named_documents(letters, alice_client, body, field):
    response = alice_client.post(f"{BASE}/development/", body, format="json")

    assert response.status_code == 400
    assert field in response.json()


def test_naming_an_unknown_document_is_a_bad_request(letters, alice_client):
    response = alice_client.post(f"{BASE}/development/", {"document_ids": ["nope"]}, format="json")

    assert response.status_code == 400
    assert "nope" in response.json()["document_ids"][0]


def test_alice_moves_documents_to_validation_with_a_development_runs_configuration(letters, alice_client):
    alice_client.post(f"{BASE}/development/", {"n": 20, "seed": 42}, format="json")
    development_run = make_run(letters, stage=RunStage.DEVELOPMENT, config_hash="prompt-v3")

    response = alice_client.post(
        f"{BASE}/validation/", {"n": 8, "seed": 7, "run": development_run.pk}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["phase"] == "validation"
    assert response.json()["chosen_config_hash"] == "prompt-v3"
    assert response.json()["counts"] == {"development": 20, "validation": 8, "test": 0, "unassigned": 22}


def test_a_run_of_another_project_cannot_be_chosen(letters, alice_client, alice):
    elsewhere = Project.objects.create(name="Other", slug="other")
    foreign_run = make_run(elsewhere, stage=RunStage.ALL)
    alice_client.post(f"{BASE}/development/", {"n": 20, "seed": 42}, format="json")

    response = alice_client.post(
        f"{BASE}/validation/", {"n": 8, "seed": 7, "run": foreign_run.pk}, format="json"
    )

    assert response.status_code == 400
    assert "run" in response.json()


def test_a_transition_out_of_its_phase_is_a_409_with_the_reason(letters, alice_client):
    response = alice_client.post(f"{BASE}/accept/", {}, format="json")

    assert response.status_code == 409
    assert response.json()["code"] == "wrong_phase"
    assert "development phase" in response.json()["detail"]


def test_reject_and_accept_are_for_alice_the_manager(letters, alice_client, bob_client, charlie_client):
    alice_client.post(f"{BASE}/development/", {"n": 20, "seed": 42}, format="json")
    run = make_run(letters, stage=RunStage.DEVELOPMENT)
    alice_client.post(f"{BASE}/validation/", {"n": 8, "seed": 7, "run": run.pk}, format="json")

    assert bob_client.post(f"{BASE}/reject/", {}, format="json").status_code == 403
    assert charlie_client.post(f"{BASE}/reject/", {}, format="json").status_code == 404

    rejected = alice_client.post(f"{BASE}/reject/", {"reason": "recall too low"}, format="json")
    assert rejected.status_code == 200
    assert rejected.json()["counts"]["development"] == 28


@pytest.mark.parametrize("transition", ["development", "validation", "accept", "reject"])
def test_viewers_auditors_and_outsiders_cannot_move_documents(
    letters, bob_client, dave, charlie_client, transition
):
    assert bob_client.post(f"{BASE}/{transition}/", {}, format="json").status_code == 403
    assert token_client(dave).post(f"{BASE}/{transition}/", {}, format="json").status_code == 403
    assert charlie_client.post(f"{BASE}/{transition}/", {}, format="json").status_code == 404
    assert not SplitEvent.objects.exists()


def test_a_read_only_token_of_alice_cannot_move_documents(letters, alice):
    response = token_client(alice, read_only=True).post(
        f"{BASE}/development/", {"n": 1, "seed": 1}, format="json"
    )

    assert response.status_code == 403
