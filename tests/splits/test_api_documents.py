"""GET .../splits/documents/?stage=current: what a pipeline should run on now. Text only, never gold."""

from __future__ import annotations

from annotations.models import Document
from experiments.models import RunStage, SplitEvent
from experiments.splits import split_assign_development, split_move_to_validation
from tests.conftest import token_client
from tests.splits.conftest import make_run

URL = "/api/v1/projects/letters/splits/documents/"


def test_in_development_the_pipeline_gets_the_development_documents(letters, alice, bob_client):
    drawn = split_assign_development(project=letters, actor=alice, n=20, seed=42)

    body = bob_client.get(URL, {"stage": "current", "page_size": 100}).json()

    assert sorted(document["external_id"] for document in body["results"]) == sorted(
        d.external_id for d in drawn
    )
    assert set(body["results"][0]) == {"id", "external_id", "name", "text"}


def test_in_validation_the_current_documents_are_the_validation_documents(letters, alice, bob_client):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    run = make_run(letters, stage=RunStage.DEVELOPMENT)
    validation = split_move_to_validation(project=letters, actor=alice, run=run, n=8, seed=7)

    current = bob_client.get(URL).json()["results"]
    development = bob_client.get(URL, {"stage": "development", "page_size": 100}).json()["results"]

    assert sorted(document["external_id"] for document in current) == [d.external_id for d in validation]
    assert len(development) == 20


def test_asking_for_the_test_documents_before_acceptance_is_refused_and_logged(letters, bob, bob_client):
    response = bob_client.get(URL, {"stage": "test"}, HTTP_X_REQUEST_ID="req-peek")

    assert response.status_code == 403
    assert response.json()["code"] == "hidden_before_acceptance"
    refusal = SplitEvent.objects.get(project=letters, action="access_refused")
    assert (refusal.actor, refusal.request_id) == (bob, "req-peek")


def test_a_stage_the_phase_does_not_open_is_a_409(letters, bob_client):
    response = bob_client.get(URL, {"stage": "validation"})

    assert response.status_code == 409
    assert response.json()["code"] == "stage_not_open"


def test_under_the_null_strategy_every_document_is_current(project, bob_client):
    Document.objects.create(project=project, external_id="d1", text="x")

    assert [d["external_id"] for d in bob_client.get(URL).json()["results"]] == ["d1"]


def test_the_auditor_reads_the_audit_not_the_documents(letters, dave, charlie_client):
    assert token_client(dave).get(URL).status_code == 403
    assert charlie_client.get(URL).status_code == 404
