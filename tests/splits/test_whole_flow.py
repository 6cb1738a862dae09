"""The whole dev_val_test story, through the API, as alice (manager), pat (pipeline) and bob (viewer) live it.

Fifty discharge letters, each naming one patient. alice draws 20 for development; pat's pipeline is
scored on them; alice validates its configuration on 8 documents no development run has seen; pat's
validation run is scored on exactly those 8 (the reference tool scored it on the development documents);
alice rejects, the 8 join development; she validates again on 8 fresh documents and accepts; pat's test
run is scored once on every remaining document; after that no split can change.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from annotations.models import Membership
from annotations.roles import Role
from tests.conftest import token_client

NAME = "Jane Doe"
CONFIG = {"model": "local-llm", "prompt": "Find every identifier."}


def _letter(number: int) -> dict:
    text = f"Letter {number:03d}. Patient {NAME} was discharged."
    start = text.index(NAME)
    return {
        "document_id": f"letter-{number:03d}",
        "text": text,
        "entities": [{"start": start, "end": start + len(NAME), "entity_type": "PERSON_NAME"}],
    }


@pytest.fixture
def pat(project):
    """The pipeline's account in alice's project."""
    pat = get_user_model().objects.create_user(username="pat", password="pat-password")
    Membership.objects.create(project=project, user=pat, role=Role.PIPELINE)
    return pat


class Pipeline:
    """What pat's pipeline does over the API: fetch the documents of the moment, run, post, finalize."""

    def __init__(self, client, run_jobs):
        self.client = client
        # Jobs are queued when the request's transaction commits; the test's never does, so run them.
        self.run_jobs = run_jobs

    def current_documents(self) -> list[dict]:
        body = self.client.get("/api/v1/projects/letters/splits/documents/", {"page_size": 1000}).json()
        assert body["next"] is None
        return body["results"]

    def create_run(self, name: str, config: dict = CONFIG):
        return self.client.post(
            "/api/v1/projects/letters/runs/", {"name": name, "kind": "spans", "config": config}, format="json"
        )

    def post_predictions(self, run_id: int, external_ids):
        documents = [{**_letter(int(external_id[-3:])), "text": None} for external_id in external_ids]
        documents = [{key: value for key, value in d.items() if value is not None} for d in documents]
        return self.client.post(
            f"/api/v1/runs/{run_id}/predictions/", {"documents": documents}, format="json"
        )

    def run_and_score(self, name: str) -> dict:
        """One full run on the current documents; returns the run as the API shows it after scoring."""
        external_ids = [document["external_id"] for document in self.current_documents()]
        created = self.create_run(name)
        assert created.status_code == 201, created.json()
        run_id = created.json()["id"]
        assert self.post_predictions(run_id, external_ids).status_code == 201
        with self.run_jobs(execute=True):
            assert self.client.post(f"/api/v1/runs/{run_id}/finalize/").status_code == 202
        run = self.client.get(f"/api/v1/runs/{run_id}/").json()
        assert run["status"] == "scored", run
        return run

    def scored_documents(self, run_id: int) -> set[str]:
        rows = self.client.get(f"/api/v1/runs/{run_id}/comparison/", {"page_size": 1000}).json()["results"]
        return {row["columns"]["document_id"] for row in rows}


def _split(client, action: str, body: dict | None = None):
    return client.post(f"/api/v1/projects/letters/splits/{action}/", body or {}, format="json")


def test_the_whole_dev_val_test_flow(project, alice, pat, bob_client, django_capture_on_commit_callbacks):
    alice_client = token_client(alice)
    pipeline = Pipeline(token_client(pat), django_capture_on_commit_callbacks)

    alice_imports_fifty_letters(alice_client, django_capture_on_commit_callbacks)
    development, development_run = pat_is_scored_on_the_development_letters(alice_client, pipeline)
    validation = alice_validates_on_eight_unseen_letters(alice_client, pipeline, development, development_run)
    pat_is_scored_on_the_validation_letters_alone(
        pipeline, bob_client, development, validation, development_run
    )
    alice_rejects_and_the_eight_return_to_development(alice_client, pipeline, development, validation)
    second_validation, chosen_run, test_documents = alice_validates_again_and_accepts(
        alice_client, pipeline, development | validation
    )
    pat_is_scored_once_on_the_test_letters(
        pipeline, test_documents, development | validation | second_validation
    )
    no_split_changes_after_acceptance(alice_client, chosen_run)


def alice_imports_fifty_letters(alice_client, run_jobs) -> None:
    """alice chooses the strategy and imports the gold of fifty letters."""
    assert (
        alice_client.patch(
            "/api/v1/projects/letters/", {"strategy": "dev_val_test"}, format="json"
        ).status_code
        == 200
    )
    gold = "\n".join(json.dumps(_letter(number)) for number in range(50)).encode()
    with run_jobs(execute=True):
        imported = alice_client.post(
            "/api/v1/projects/letters/imports/",
            {"file": SimpleUploadedFile("gold.jsonl", gold), "format": "jsonl"},
            format="multipart",
        )
    assert imported.status_code == 202
    assert alice_client.get(f"/api/v1/jobs/{imported.json()['id']}/").json()["status"] == "succeeded"


def pat_is_scored_on_the_development_letters(alice_client, pipeline: Pipeline) -> tuple[set[str], dict]:
    """Development: 20 documents drawn with a seed; pat's run is scored on them and on nothing else."""
    development = set(_split(alice_client, "development", {"n": 20, "seed": 42}).json()["moved"])
    assert len(development) == 20
    assert {document["external_id"] for document in pipeline.current_documents()} == development
    development_run = pipeline.run_and_score("prompt v1 on development")
    assert development_run["stage"] == "development"
    assert pipeline.scored_documents(development_run["id"]) == development
    return development, development_run


def alice_validates_on_eight_unseen_letters(
    alice_client, pipeline: Pipeline, development: set[str], development_run: dict
) -> set[str]:
    """Validation: 8 documents, with the configuration of that development run; a run with another
    configuration cannot be the validation run."""
    moved = _split(alice_client, "validation", {"n": 8, "seed": 7, "run": development_run["id"]})
    assert moved.json()["phase"] == "validation"
    validation = set(moved.json()["moved"])
    assert len(validation) == 8 and not validation & development

    other = pipeline.create_run("prompt v2", config={**CONFIG, "prompt": "Something else."})
    assert other.status_code == 409
    assert other.json()["code"] == "configuration_not_chosen"
    assert other.json()["chosen_config_hash"] == development_run["config_hash"]
    return validation


def pat_is_scored_on_the_validation_letters_alone(
    pipeline: Pipeline, bob_client, development: set[str], validation: set[str], development_run: dict
) -> None:
    """The validation run is scored on exactly the 8 validation documents; predictions for a
    development document are refused by a validation run, naming the document."""
    validation_run = pipeline.run_and_score("prompt v1 on validation")
    assert validation_run["stage"] == "validation"
    assert validation_run["config_hash"] == development_run["config_hash"]
    assert pipeline.scored_documents(validation_run["id"]) == validation
    assert bob_client.get(f"/api/v1/runs/{validation_run['id']}/metrics/").json()["documents"] == 8

    late_run = pipeline.create_run("prompt v1, again").json()
    refused = pipeline.post_predictions(late_run["id"], [sorted(development)[0]])
    assert refused.status_code == 409
    assert refused.json()["documents_outside_stage"] == [sorted(development)[0]]


def alice_rejects_and_the_eight_return_to_development(
    alice_client, pipeline: Pipeline, development: set[str], validation: set[str]
) -> None:
    rejected = _split(alice_client, "reject", {"reason": "recall too low on validation"})
    assert rejected.json()["phase"] == "development"
    assert rejected.json()["counts"]["development"] == 28
    assert set(rejected.json()["moved"]) == validation
    assert {document["external_id"] for document in pipeline.current_documents()} == development | validation


def alice_validates_again_and_accepts(
    alice_client, pipeline: Pipeline, seen: set[str]
) -> tuple[set[str], dict, set[str]]:
    """A second round: a new development run, validated on 8 fresh documents, then accepted. Returns
    the second validation documents, the chosen development run and the test documents."""
    chosen_run = pipeline.run_and_score("prompt v1 on the larger development set")
    second = _split(alice_client, "validation", {"n": 8, "seed": 9, "run": chosen_run["id"]}).json()
    second_validation = set(second["moved"])
    assert not second_validation & seen
    second_validation_run = pipeline.run_and_score("prompt v1 on the second validation")
    assert pipeline.scored_documents(second_validation_run["id"]) == second_validation
    accepted = _split(alice_client, "accept", {"reason": "good enough"}).json()
    assert accepted["phase"] == "finished"
    assert accepted["counts"] == {"development": 28, "validation": 8, "test": 14, "unassigned": 0}
    return second_validation, chosen_run, set(accepted["moved"])


def pat_is_scored_once_on_the_test_letters(
    pipeline: Pipeline, test_documents: set[str], seen: set[str]
) -> None:
    """The test run of the chosen configuration is scored once, on every remaining document; it is final."""
    test_run = pipeline.run_and_score("prompt v1 on test")
    assert test_run["stage"] == "test"
    assert test_run["is_final"] is True
    assert pipeline.scored_documents(test_run["id"]) == test_documents
    assert test_documents == {f"letter-{n:03d}" for n in range(50)} - seen
    assert pipeline.create_run("prompt v1 on test, once more").status_code == 409
    rescore = pipeline.client.post(f"/api/v1/runs/{test_run['id']}/rescore/")
    assert rescore.status_code == 409
    assert rescore.json()["code"] == "test_result_final"


def no_split_changes_after_acceptance(alice_client, chosen_run: dict) -> None:
    for action, body in [
        ("development", {"n": 1, "seed": 1}),
        ("validation", {"n": 1, "seed": 1, "run": chosen_run["id"]}),
        ("reject", {}),
        ("accept", {}),
    ]:
        refusal = _split(alice_client, action, body)
        assert refusal.status_code == 409
        assert refusal.json()["code"] == "splits_sealed"
