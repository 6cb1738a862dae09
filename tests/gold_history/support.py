"""Span gold in versions, imported over the API as an annotator would."""

from __future__ import annotations

import json

from tests.services.test_gold_import_fixtures import upload

TEXTS = {
    "d1": "Anna Berg met Carl Diaz.",
    "d2": "Call 555-1234 now.",
    "d3": "Born 1 May 1980.",
    "d4": "Dr. Eve Fox.",
}
V1 = {
    "d1": [(0, 9, "PERSON_NAME"), (14, 23, "PERSON_NAME")],
    "d2": [(5, 13, "PHONE")],
    "d3": [(5, 15, "DATE_OF_BIRTH")],
}


def jsonl(documents: dict[str, list[tuple[int, int, str]]]) -> bytes:
    return "\n".join(
        json.dumps(
            {
                "document_id": document_id,
                "text": TEXTS[document_id],
                "entities": [{"start": s, "end": e, "entity_type": t} for s, e, t in spans],
            }
        )
        for document_id, spans in documents.items()
    ).encode()


def import_gold(client, capture, documents, slug: str = "letters") -> dict:
    with capture(execute=True):
        response = client.post(
            f"/api/v1/projects/{slug}/imports/",
            {"file": upload("gold.jsonl", jsonl(documents))},
            format="multipart",
        )
    assert response.status_code == 202, response.data
    job = client.get(f"/api/v1/jobs/{response.data['id']}/").data
    assert job["status"] == "succeeded", job["errors"]
    return job


def predictions(documents: dict[str, list[tuple[int, int, str]]]) -> list[dict]:
    return [
        {
            "document_id": document_id,
            "entities": [{"start": s, "end": e, "entity_type": t} for s, e, t in spans],
        }
        for document_id, spans in documents.items()
    ]
