"""Runs under the dev_val_test strategy: predictions and scores stay inside the run's stage."""

from __future__ import annotations

import pytest

from metrics.models import Scoring
from tests.api.runs_support import (
    SPANS,
    create_run,
    finalize,
    post_documents,
    read_jsonl,
    span_project_in_development,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def development_project(project, alice):
    return span_project_in_development(project, alice)


def test_a_development_run_refuses_predictions_for_documents_outside_development(
    development_project, alice_client
):
    run = create_run(alice_client, kind="spans")
    assert run["stage"] == "development"
    held_back = [d for d in read_jsonl(SPANS / "spans_predictions.jsonl") if d["document_id"] == "letter-3"]

    response = post_documents(alice_client, run["id"], held_back)

    assert response.status_code == 409
    assert response.json()["code"] == "documents_outside_stage"
    assert response.json()["documents_outside_stage"] == ["letter-3"]


def test_a_development_run_is_scored_on_the_development_documents_only(
    development_project, alice_client, django_capture_on_commit_callbacks
):
    run = create_run(alice_client, kind="spans")
    in_development = [
        d
        for d in read_jsonl(SPANS / "spans_predictions.jsonl")
        if d["document_id"] in ("letter-1", "letter-2")
    ]
    assert post_documents(alice_client, run["id"], in_development).status_code == 201

    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])

    scoring = Scoring.objects.get(run_id=run["id"])
    assert scoring.document_ids == ["letter-1", "letter-2"]
    assert scoring.report["documents"] == 2
    rows = alice_client.get(f"/api/v1/runs/{run['id']}/comparison/?page_size=100").json()["results"]
    assert {row["columns"]["document_id"] for row in rows} == {"letter-1", "letter-2"}
