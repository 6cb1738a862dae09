"""GET /api/v1/runs/compare/?a=&b=: metric deltas and the rows whose outcome changed."""

from __future__ import annotations

import copy

import pytest

from annotations.models import Membership, Project
from annotations.roles import Role
from tests.api.runs_support import (
    EXTRACTION,
    SPANS,
    create_run,
    finalize,
    load_extraction_gold,
    load_span_gold,
    post_documents,
    prompts_as_run_prompts,
    read_jsonl,
)

pytestmark = pytest.mark.django_db


def _scored(client, documents, capture, slug="letters", **fields) -> dict:
    run = create_run(client, slug=slug, **fields)
    assert post_documents(client, run["id"], documents).status_code == 201
    with capture(execute=True):
        finalize(client, run["id"])
    return run


@pytest.fixture
def two_attribute_runs(project, alice_client, django_capture_on_commit_callbacks) -> tuple[dict, dict]:
    load_extraction_gold(project)
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    better = copy.deepcopy(documents)
    better[0]["annotations"][1]["output_data"] = "Kenya"  # near match -> exact match
    options = {"config": {"edit_distance_match_threshold": 0.75}, "prompts": prompts_as_run_prompts()}
    a = _scored(alice_client, documents, django_capture_on_commit_callbacks, name="baseline", **options)
    b = _scored(alice_client, better, django_capture_on_commit_callbacks, name="better", **options)
    return a, b


def test_it_gives_the_metric_deltas_per_attribute_and_the_rows_that_changed(two_attribute_runs, bob_client):
    a, b = two_attribute_runs

    response = bob_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}")

    assert response.status_code == 200
    body = response.json()
    assert (body["a"]["run"], body["b"]["run"], body["gold_version"]) == (a["id"], b["id"], 1)
    country = {m["name"]: m for m in body["metrics"] if m["scope_key"] == "102"}
    assert country["accuracy_given_prediction"]["a"] == 0.0
    assert country["accuracy_given_prediction"]["b"] == 0.5
    assert country["accuracy_given_prediction"]["delta"] == 0.5
    assert body["changed_rows"] == [
        {"document_id": "1001", "attribute_id": "102", "a": "near_match", "b": "exact_match"}
    ]
    assert body["changed_rows_total"] == 1


def test_span_runs_compare_by_span_outcome(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_span_gold(project)
    documents = read_jsonl(SPANS / "spans_predictions.jsonl")
    better = copy.deepcopy(documents)
    better[0]["entities"].append({"start": 64, "end": 71, "entity_type": "ID_NUMBER"})
    a = _scored(alice_client, documents, django_capture_on_commit_callbacks, kind="spans")
    b = _scored(alice_client, better, django_capture_on_commit_callbacks, kind="spans")

    body = bob_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}").json()

    assert body["changed_rows"] == [
        {
            "document_id": "letter-1",
            "side": "gold",
            "start": 64,
            "end": 71,
            "entity_type": "ID_NUMBER",
            "a": "missed",
            "b": "exact",
        }
    ]
    recall = next(
        m
        for m in body["metrics"]
        if m["scope"] == "overall" and m["name"] == "micro.spans_exact.type_agnostic.recall"
    )
    assert recall["delta"] > 0


def test_runs_scored_on_different_gold_versions_are_not_compared(
    project, two_attribute_runs, alice_client, bob_client, tmp_path, django_capture_on_commit_callbacks
):
    a, b = two_attribute_runs
    corrected = tmp_path / "gold.jsonl"
    corrected.write_text(
        (EXTRACTION / "gold.jsonl").read_text().replace('"output_data": "80"', '"output_data": "85"')
    )
    load_extraction_gold(project, gold=corrected)
    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post(f"/api/v1/runs/{b['id']}/rescore/")

    response = bob_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}")

    assert response.status_code == 409
    assert response.json()["code"] == "different_gold_versions"
    # An earlier scoring of b is on a's gold version: that comparison is possible.
    assert bob_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}&scoring_b=1").status_code == 200


def test_runs_of_two_projects_are_not_compared(
    project, two_attribute_runs, alice, alice_client, django_capture_on_commit_callbacks
):
    other = Project.objects.create(name="Other", slug="other", created_by=alice)
    Membership.objects.create(project=other, user=alice, role=Role.MANAGER)
    load_extraction_gold(other)
    c = _scored(
        alice_client,
        read_jsonl(EXTRACTION / "llm.jsonl"),
        django_capture_on_commit_callbacks,
        slug="other",
        prompts=prompts_as_run_prompts(),
    )

    response = alice_client.get(f"/api/v1/runs/compare/?a={two_attribute_runs[0]['id']}&b={c['id']}")

    assert response.status_code == 409
    assert response.json()["code"] == "different_projects"


def test_an_outsider_gets_404(two_attribute_runs, charlie_client):
    a, b = two_attribute_runs
    assert charlie_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}").status_code == 404


def test_both_runs_are_required(bob_client, two_attribute_runs):
    assert bob_client.get(f"/api/v1/runs/compare/?a={two_attribute_runs[0]['id']}").status_code == 400
