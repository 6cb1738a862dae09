"""GET .../splits/events/: the audit trail, for auditors and managers, page by page."""

from __future__ import annotations

from experiments.splits import split_assign_development
from tests.conftest import token_client

URL = "/api/v1/projects/letters/splits/events/"


def test_dave_the_auditor_reads_every_event_page_by_page(letters, alice, dave):
    split_assign_development(
        project=letters, actor=alice, n=5, seed=3, reason="first look", request_id="req-1"
    )
    client = token_client(dave)

    first = client.get(URL, {"page_size": 4}).json()
    second = client.get(first["next"]).json()

    events = first["results"] + second["results"]
    assert second["next"] is None
    assert [event["action"] for event in events] == ["assign_development"] * 6
    assert events[0]["actor"] == "alice"
    assert (events[0]["from_split"], events[0]["to_split"]) == ("", "development")
    assert (events[0]["seed"], events[0]["reason"], events[0]["request_id"]) == (3, "first look", "req-1")
    assert events[-1]["document"] is None
    assert events[-1]["counts_after"] == {"development": 5, "validation": 0, "test": 0, "unassigned": 45}


def test_the_events_of_one_document(letters, alice, dave):
    split_assign_development(project=letters, actor=alice, document_ids=["letter-001", "letter-002"])

    events = token_client(dave).get(URL, {"document": "letter-002"}).json()["results"]

    assert [event["document"] for event in events] == ["letter-002"]


def test_alice_the_manager_reads_the_events_bob_the_viewer_does_not(
    letters, alice_client, bob_client, charlie_client
):
    assert alice_client.get(URL).status_code == 200
    assert bob_client.get(URL).status_code == 403
    assert charlie_client.get(URL).status_code == 404
