"""POST/GET /api/v1/projects/{slug}/runs/ and GET /api/v1/runs/{id}/: alice's pipeline creates runs,
bob (viewer) reads them, charlie (outsider) sees nothing."""

from __future__ import annotations

import pytest

from tests.api.runs_support import add_member, create_run, load_extraction_gold, prompts_as_run_prompts
from tests.conftest import token_client

pytestmark = pytest.mark.django_db

CONFIG_YAML = """\
model: gpt-4o-mini
temperature: 0
edit_distance_match_threshold: 0.75
"""


def test_a_manager_creates_an_open_run_with_a_configuration_snapshot(project, alice_client):
    load_extraction_gold(project)
    run = create_run(alice_client, config=CONFIG_YAML, prompts=prompts_as_run_prompts())

    assert run["status"] == "open"
    assert run["stage"] == "all"
    assert run["config"] == {"model": "gpt-4o-mini", "temperature": 0, "edit_distance_match_threshold": 0.75}
    assert run["config_yaml"] == CONFIG_YAML
    assert len(run["config_hash"]) == 64
    assert run["progress"] is None
    assert run["gold_version"] is None


def test_the_same_configuration_as_yaml_or_object_has_the_same_hash(project, alice_client):
    from_yaml = create_run(alice_client, kind="spans", config=CONFIG_YAML)
    from_object = create_run(
        alice_client,
        kind="spans",
        config={"edit_distance_match_threshold": 0.75, "temperature": 0, "model": "gpt-4o-mini"},
    )
    other = create_run(alice_client, kind="spans", config={"model": "gpt-4o"})

    assert from_yaml["config_hash"] == from_object["config_hash"]
    assert other["config_hash"] != from_yaml["config_hash"]


def test_prompts_are_part_of_the_configuration_hash(project, alice_client):
    load_extraction_gold(project)
    prompts = prompts_as_run_prompts()
    first = create_run(alice_client, config={"model": "m"}, prompts=prompts)
    prompts[0]["prompt"] = "Was allocation random? Answer yes or no."
    second = create_run(alice_client, config={"model": "m"}, prompts=prompts)

    assert first["config_hash"] != second["config_hash"]


def test_it_rejects_a_configuration_that_is_not_a_mapping(project, alice_client):
    response = alice_client.post(
        "/api/v1/projects/letters/runs/",
        {"name": "r", "kind": "spans", "config": "- a\n- b\n"},
        format="json",
    )
    assert response.status_code == 400
    assert "mapping" in response.json()["detail"]


def test_it_rejects_invalid_yaml_naming_the_line(project, alice_client):
    response = alice_client.post(
        "/api/v1/projects/letters/runs/",
        {"name": "r", "kind": "spans", "config": "a: 1\nb: [\n"},
        format="json",
    )
    assert response.status_code == 400
    assert "line" in response.json()["detail"]


def test_it_rejects_a_threshold_outside_zero_to_one(project, alice_client):
    response = alice_client.post(
        "/api/v1/projects/letters/runs/",
        {"name": "r", "kind": "attributes", "config": {"edit_distance_match_threshold": 1.5}},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["field"] == "edit_distance_match_threshold"


def test_it_rejects_prompts_for_attributes_the_project_does_not_have(project, alice_client):
    load_extraction_gold(project)
    response = alice_client.post(
        "/api/v1/projects/letters/runs/",
        {"name": "r", "kind": "attributes", "prompts": [{"attribute_id": "999", "prompt": "Anything?"}]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["prompts"][0]["message"] == "unknown attribute_id '999'"


def test_a_viewer_may_not_create_runs(project, bob_client):
    response = bob_client.post(
        "/api/v1/projects/letters/runs/", {"name": "r", "kind": "spans"}, format="json"
    )
    assert response.status_code == 403


def test_a_pipeline_member_may_create_runs(project, charlie):
    add_member(project, charlie)
    run = create_run(token_client(charlie), kind="spans")
    assert run["status"] == "open"


def test_an_outsider_gets_404_for_the_list_the_creation_and_the_run(project, alice_client, charlie_client):
    run = create_run(alice_client, kind="spans")

    assert charlie_client.get("/api/v1/projects/letters/runs/").status_code == 404
    assert (
        charlie_client.post(
            "/api/v1/projects/letters/runs/", {"name": "r", "kind": "spans"}, format="json"
        ).status_code
        == 404
    )
    assert charlie_client.get(f"/api/v1/runs/{run['id']}/").status_code == 404
    assert charlie_client.get("/api/v1/runs/999999/").status_code == 404


def test_a_viewer_lists_the_projects_runs_newest_first(project, alice_client, bob_client):
    first = create_run(alice_client, kind="spans", name="first")
    second = create_run(alice_client, kind="spans", name="second")

    response = bob_client.get("/api/v1/projects/letters/runs/")

    assert response.status_code == 200
    assert [run["id"] for run in response.json()["results"]] == [second["id"], first["id"]]
    assert bob_client.get(f"/api/v1/runs/{first['id']}/").json()["name"] == "first"


def test_the_run_list_filters_by_kind(project, alice_client, bob_client):
    create_run(alice_client, kind="spans")
    load_extraction_gold(project)
    attributes = create_run(alice_client, kind="attributes")

    response = bob_client.get("/api/v1/projects/letters/runs/?kind=attributes")

    assert [run["id"] for run in response.json()["results"]] == [attributes["id"]]


def test_the_run_list_costs_the_same_queries_for_3_or_30_runs(project, alice_client, bob_client):
    def count_queries() -> int:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as context:
            assert bob_client.get("/api/v1/projects/letters/runs/").status_code == 200
        return len(context.captured_queries)

    for index in range(3):
        create_run(alice_client, kind="spans", name=f"run {index}")
    baseline = count_queries()
    for index in range(27):
        create_run(alice_client, kind="spans", name=f"more {index}")

    assert count_queries() == baseline


def test_a_run_of_a_project_charlie_is_not_in_is_no_such_run_not_no_such_project(
    project, alice_client, charlie_client
):
    run = create_run(alice_client, kind="spans")

    for url in (f"/api/v1/runs/{run['id']}/", f"/api/v1/runs/{run['id']}/metrics/"):
        response = charlie_client.get(url)
        assert response.status_code == 404
        assert response.json() == {"detail": "No such run."}
