"""GET /api/v1/projects/{slug}/gold/versions/{a}/diff/{b}/: documents and spans added, removed, changed."""

from __future__ import annotations

import json

import pytest

from tests.gold_history.support import V1, import_gold, two_versions_with_one_document_held_back
from tests.services.test_gold_import_fixtures import media_root  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("media_root")

DIFF = "/api/v1/projects/letters/gold/versions/1/diff/2/"


@pytest.fixture
def two_versions(project, alice_client, django_capture_on_commit_callbacks):
    """v1: d1-d3. v2 re-imports d2 (its PHONE is now an ID_NUMBER) and adds d4; d1 and d3 carry over."""
    import_gold(alice_client, django_capture_on_commit_callbacks, V1)
    import_gold(
        alice_client,
        django_capture_on_commit_callbacks,
        {"d2": [(5, 13, "ID_NUMBER")], "d4": [(4, 11, "PERSON_NAME")]},
    )
    return project


def test_the_diff_lists_what_changed_per_document_and_per_type(two_versions, bob_client):
    body = bob_client.get(DIFF).json()
    assert body["kind"] == "spans"
    assert body["summary"] == {
        "documents_added": 1,
        "documents_removed": 0,
        "documents_changed": 1,
        "per_type": {
            "ID_NUMBER": {"added": 0, "removed": 0, "changed": 1},
            "PERSON_NAME": {"added": 1, "removed": 0, "changed": 0},
        },
    }
    by_document = {entry["document_id"]: entry for entry in body["results"]}
    assert set(by_document) == {"d2", "d4"}
    assert by_document["d2"]["status"] == "changed"
    assert by_document["d2"]["spans_changed"] == [{"start": 5, "end": 13, "from": "PHONE", "to": "ID_NUMBER"}]
    assert by_document["d4"]["spans_added"] == [{"start": 4, "end": 11, "entity_type": "PERSON_NAME"}]


def test_the_reverse_diff_removes_what_the_forward_one_added(two_versions, bob_client):
    body = bob_client.get("/api/v1/projects/letters/gold/versions/2/diff/1/").json()
    assert body["summary"]["documents_removed"] == 1
    assert body["summary"]["per_type"]["PERSON_NAME"] == {"added": 0, "removed": 1, "changed": 0}


def test_it_is_paged_by_document(two_versions, bob_client):
    first = bob_client.get(f"{DIFF}?page_size=1").json()
    assert len(first["results"]) == 1 and first["next"]
    second = bob_client.get(first["next"]).json()
    assert {first["results"][0]["document_id"], second["results"][0]["document_id"]} == {"d2", "d4"}
    assert second["summary"] == first["summary"]


def test_an_unknown_version_is_404_and_an_outsider_sees_nothing(two_versions, bob_client, charlie_client):
    assert bob_client.get("/api/v1/projects/letters/gold/versions/1/diff/9/").status_code == 404
    assert charlie_client.get(DIFF).status_code == 404


def test_held_back_documents_never_appear_in_a_diff(
    project, alice, alice_client, bob_client, django_capture_on_commit_callbacks
):
    hidden = two_versions_with_one_document_held_back(
        project, alice=alice, alice_client=alice_client, capture_on_commit=django_capture_on_commit_callbacks
    )
    body = bob_client.get(DIFF).json()
    assert body["summary"]["documents_changed"] == 2
    assert hidden not in json.dumps(body)
    assert body["summary"]["per_type"]["OTHER_PII"]["added"] == 2
