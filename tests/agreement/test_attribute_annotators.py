"""Attribute gold JSONL whose lines name their annotator: one is gold, the others human runs, and the
project's agreement covers the attributes."""

from __future__ import annotations

import json

import pytest
from sklearn.metrics import cohen_kappa_score

from annotations.models import GoldAttributeValue
from experiments.models import ExperimentRun, RunSource, RunStatus
from tests.api.runs_support import create_run, finalize, post_documents
from tests.services.test_gold_import_fixtures import (
    media_root,  # noqa: F401 (a fixture)
    upload,
)

IMPORTS = "/api/v1/projects/letters/imports/"
PROMPTS = "prompt,output_data_type,attribute_id,attribute_label\nDoes the patient smoke?,bool,smoker,Smoker\n"
SMOKER = {
    "alice": {"d1": True, "d2": False, "d3": False, "d4": True},
    "bob": {"d1": True, "d2": True, "d3": False, "d4": True},
}

pytestmark = pytest.mark.usefixtures("media_root")


def _import(client, capture, name: str, content: bytes, **fields) -> dict:
    with capture(execute=True):
        response = client.post(IMPORTS, {"file": upload(name, content), **fields}, format="multipart")
    assert response.status_code == 202, response.data
    return client.get(f"/api/v1/jobs/{response.data['id']}/").data


def _gold() -> bytes:
    lines = [
        {
            "document_id": document_id,
            "annotator": annotator,
            "text": f"Letter {document_id}.",
            "attributes": {"smoker": {"output_data": value}},
        }
        for annotator, values in SMOKER.items()
        for document_id, value in values.items()
    ]
    return "\n".join(json.dumps(line) for line in lines).encode()


@pytest.fixture
def imported(project, alice_client, django_capture_on_commit_callbacks):
    job = _import(alice_client, django_capture_on_commit_callbacks, "prompts.csv", PROMPTS.encode())
    assert job["status"] == "succeeded", job["errors"]
    job = _import(alice_client, django_capture_on_commit_callbacks, "gold.jsonl", _gold(), annotator="alice")
    assert job["status"] == "succeeded", job["errors"]
    return project


def test_without_a_chosen_annotator_the_file_is_refused(
    project, alice_client, django_capture_on_commit_callbacks
):
    _import(alice_client, django_capture_on_commit_callbacks, "prompts.csv", PROMPTS.encode())
    job = _import(alice_client, django_capture_on_commit_callbacks, "gold.jsonl", _gold())
    assert job["status"] == "failed"
    assert "alice, bob" in job["errors"][0]["message"]


def test_the_chosen_annotator_is_gold_and_the_other_a_scored_human_run(imported):
    gold = dict(GoldAttributeValue.objects.values_list("document__external_id", "output_data"))
    assert gold == SMOKER["alice"]
    human = ExperimentRun.objects.get(project=imported, source=RunSource.HUMAN)
    assert (human.name, human.kind, human.status) == ("bob", "attributes", RunStatus.SCORED)


def test_the_agreement_covers_the_attributes(imported, alice_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post("/api/v1/projects/letters/agreement/")
    (entry,) = alice_client.get("/api/v1/projects/letters/agreement/").data["attributes"]
    documents = sorted(SMOKER["alice"])
    expected = cohen_kappa_score(
        [SMOKER["alice"][d] for d in documents], [SMOKER["bob"][d] for d in documents]
    )
    assert (entry["attribute_id"], entry["measure"], entry["annotators"]) == (
        "smoker",
        "cohen_kappa",
        ["alice", "bob"],
    )
    assert entry["value"] == pytest.approx(expected, abs=1e-12)
    assert entry["percent_agreement"] == pytest.approx(3 / 4)


def test_an_attribute_run_shows_the_human_ceiling_per_attribute(
    imported, alice_client, bob_client, django_capture_on_commit_callbacks
):
    run = create_run(alice_client, kind="attributes", name="always smoker")
    documents = [
        {
            "document_id": document_id,
            "context": f"Letter {document_id}.",
            "annotations": [{"attribute_id": "smoker", "output_data": True}],
        }
        for document_id in SMOKER["alice"]
    ]
    assert post_documents(alice_client, run["id"], documents).status_code in (200, 201)
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])
    ceiling = bob_client.get(f"/api/v1/runs/{run['id']}/metrics/").json()["human_ceiling"]
    (entry,) = ceiling["metrics"]
    assert (entry["scope_key"], entry["name"]) == ("smoker", "accuracy")
    assert entry["model"]["value"] == pytest.approx(2 / 4)
    (bob,) = entry["annotators"]
    assert bob["name"] == "bob" and bob["value"] == pytest.approx(3 / 4)
    assert bob["paired"]["delta"] == pytest.approx(2 / 4 - 3 / 4)
    assert entry["text"].startswith("smoker accuracy 0.50")
