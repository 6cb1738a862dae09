"""Projects: alice creates and manages, bob (viewer) reads, charlie (outsider) gets 404."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotations.models import Attribute, EntityType, Membership, Project
from annotations.roles import Role
from annotations.services import project_create
from tests.conftest import token_client

LETTERS = "/api/v1/projects/letters/"


def new_project_payload(**overrides) -> dict:
    payload = {
        "name": "Trial reports",
        "slug": "trials",
        "settings": {"edit_distance_match_threshold": 0.8, "number_format": "de"},
        "attributes": [
            {"attribute_id": "101", "label": "Randomised", "type": "Bool", "prompt": "Randomised?"},
            {
                "attribute_id": "103",
                "label": "Participants",
                "type": "INTEGER",
                "prompt": "How many?",
                "missing_default": None,
            },
        ],
        "entity_types": ["person_name", "DATE_OF_BIRTH"],
    }
    payload.update(overrides)
    return payload


def test_alice_creates_a_project_and_becomes_its_manager(alice_client, alice):
    response = alice_client.post("/api/v1/projects/", new_project_payload(), format="json")

    assert response.status_code == 201, response.data
    assert response.data["role"] == "manager"
    assert response.data["settings"] == {"edit_distance_match_threshold": 0.8, "number_format": "de"}
    assert response.data["strategy"] == "null"
    assert [a["attribute_id"] for a in response.data["attributes"]] == ["101", "103"]
    assert response.data["entity_types"] == ["DATE_OF_BIRTH", "PERSON_NAME"]
    project = Project.objects.get(slug="trials")
    assert Membership.objects.get(project=project).user == alice
    participants = Attribute.objects.get(project=project, attribute_id="103")
    assert (participants.type, participants.uses_type_default, participants.missing_default) == (
        "INTEGER",
        False,
        None,
    )
    assert Attribute.objects.get(project=project, attribute_id="101").uses_type_default is True


def test_settings_default_when_left_out(alice_client):
    response = alice_client.post("/api/v1/projects/", {"name": "Plain", "slug": "plain"}, format="json")

    assert response.status_code == 201
    assert response.data["settings"] == {"edit_distance_match_threshold": 0.9, "number_format": "en"}


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"settings": {"edit_distance_match_threshold": 1.5}}, "settings"),
        ({"settings": {"number_format": "fr"}}, "settings"),
        ({"attributes": [{"attribute_id": "1", "label": "When", "type": "date"}]}, "attributes"),
        ({"attributes": [{"attribute_id": "1", "type": "bool"}]}, "attributes"),
        ({"entity_types": ["SHOE_SIZE"]}, "entity_types"),
        ({"strategy": "k_fold"}, "strategy"),
        ({"slug": "not a slug"}, "slug"),
    ],
)
def test_a_project_with_invalid_settings_or_schema_is_refused(alice_client, overrides, field):
    response = alice_client.post("/api/v1/projects/", new_project_payload(**overrides), format="json")

    assert response.status_code == 400
    assert field in response.data
    assert not Project.objects.filter(slug=overrides.get("slug", "trials")).exists()


def test_a_taken_slug_is_refused(alice_client, project):
    response = alice_client.post("/api/v1/projects/", new_project_payload(slug="letters"), format="json")

    assert response.status_code == 400
    assert "slug" in response.data


def test_each_sees_only_the_projects_they_are_a_member_of(
    project, alice_client, bob_client, charlie_client, charlie
):
    project_create(user=charlie, name="Charlie's own", slug="charlies")

    assert [(p["slug"], p["role"]) for p in alice_client.get("/api/v1/projects/").data["results"]] == [
        ("letters", "manager")
    ]
    assert [(p["slug"], p["role"]) for p in bob_client.get("/api/v1/projects/").data["results"]] == [
        ("letters", "viewer")
    ]
    assert [p["slug"] for p in charlie_client.get("/api/v1/projects/").data["results"]] == ["charlies"]


def test_alice_and_bob_read_the_project_and_charlie_gets_404(
    project, alice_client, bob_client, charlie_client
):
    assert alice_client.get(LETTERS).status_code == 200
    bob_sees = bob_client.get(LETTERS)
    assert bob_sees.status_code == 200
    assert bob_sees.data["role"] == "viewer"
    charlie_sees = charlie_client.get(LETTERS)
    assert charlie_sees.status_code == 404
    # Exactly what a project that does not exist answers: no hint that this one does.
    assert charlie_sees.data == charlie_client.get("/api/v1/projects/no-such-project/").data


def test_alice_changes_the_settings_which_are_merged(project, alice_client):
    response = alice_client.patch(
        LETTERS, {"settings": {"number_format": "de"}, "name": "Briefe"}, format="json"
    )

    assert response.status_code == 200, response.data
    project.refresh_from_db()
    assert project.name == "Briefe"
    assert project.settings == {"edit_distance_match_threshold": 0.9, "number_format": "de"}


def test_alice_switches_the_strategy_and_the_project_enters_development(project, alice_client):
    response = alice_client.patch(LETTERS, {"strategy": "dev_val_test"}, format="json")

    assert response.status_code == 200, response.data
    assert (response.data["strategy"], response.data["phase"]) == ("dev_val_test", "development")


def test_an_invalid_setting_change_is_refused_and_changes_nothing(project, alice_client):
    response = alice_client.patch(
        LETTERS, {"settings": {"edit_distance_match_threshold": -0.1}}, format="json"
    )

    assert response.status_code == 400
    project.refresh_from_db()
    assert project.settings["edit_distance_match_threshold"] == 0.9


def test_bob_may_not_change_the_project_and_charlie_gets_404(project, bob_client, charlie_client):
    assert bob_client.patch(LETTERS, {"name": "Bob's"}, format="json").status_code == 403
    assert charlie_client.patch(LETTERS, {"name": "Charlie's"}, format="json").status_code == 404
    project.refresh_from_db()
    assert project.name == "Discharge letters"


def test_alices_read_only_token_reads_but_cannot_change_or_create(project, alice):
    client = token_client(alice, read_only=True)

    assert client.get(LETTERS).status_code == 200
    assert client.patch(LETTERS, {"name": "x"}, format="json").status_code == 403
    assert client.post("/api/v1/projects/", new_project_payload(), format="json").status_code == 403


def test_an_annotator_reads_but_may_not_change_settings(project):
    dana = get_user_model().objects.create_user("dana")
    Membership.objects.create(project=project, user=dana, role=Role.ANNOTATOR)

    assert token_client(dana).patch(LETTERS, {"name": "x"}, format="json").status_code == 403


def test_the_project_shows_its_schema(project, alice_client):
    Attribute.objects.create(project=project, attribute_id="1", label="Age", type="INTEGER", prompt="")
    EntityType.objects.create(project=project, name="PERSON_NAME")

    data = alice_client.get(LETTERS).data

    assert data["attributes"] == [
        {"attribute_id": "1", "label": "Age", "type": "INTEGER", "prompt": "", "scored": False}
    ]
    assert data["entity_types"] == ["PERSON_NAME"]


@pytest.mark.parametrize("projects", [3, 30])
def test_listing_projects_costs_the_same_queries_for_3_or_30(
    alice, alice_client, django_assert_max_num_queries, projects
):
    for index in range(projects):
        project_create(user=alice, name=f"Project {index}", slug=f"project-{index}")

    # Token lookup, its last-used stamp, one page of projects with the caller's role.
    with django_assert_max_num_queries(3):
        response = alice_client.get("/api/v1/projects/?page_size=100")

    assert len(response.data["results"]) == projects


def test_anyone_signed_in_may_start_a_project_of_their_own_but_not_anonymously(project, charlie_client):
    from rest_framework.test import APIClient

    created = charlie_client.post("/api/v1/projects/", new_project_payload(slug="charlies"), format="json")

    assert created.status_code == 201
    assert created.data["role"] == "manager"
    assert APIClient().post(
        "/api/v1/projects/", new_project_payload(slug="nobodys"), format="json"
    ).status_code in (
        401,
        403,
    )
    assert not Project.objects.filter(slug="nobodys").exists()


def test_after_a_span_gold_import_the_project_shows_the_gold_entity_types(project, bob_client):
    from tests.api.runs_support import load_span_gold

    load_span_gold(project)

    assert bob_client.get(LETTERS).json()["entity_types"] == [
        "ADDRESS",
        "AGE",
        "DATE_OF_BIRTH",
        "EMAIL",
        "ID_NUMBER",
        "ORGANIZATION",
        "OTHER_DATE",
        "PERSON_NAME",
        "PHONE",
    ]
