"""Span gold in versions, imported over the API as an annotator would."""

from __future__ import annotations

import json

from annotations.models import Document, EvaluationStrategy, ProjectPhase
from experiments.splits import split_assign_development, split_hidden_document_ids
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


def two_versions_with_one_document_held_back(project, *, alice, alice_client, capture_on_commit) -> str:
    """A dev_val_test project in development: d1-d3, two of them in development and one held back,
    gold v1 (V1) and v2 changing every document. Returns the held-back document's external id."""
    project.strategy, project.phase = EvaluationStrategy.DEV_VAL_TEST, ProjectPhase.DEVELOPMENT
    project.save()
    for document_id in ("d1", "d2", "d3"):
        Document.objects.create(project=project, external_id=document_id, text=TEXTS[document_id])
    split_assign_development(project=project, actor=alice, n=2, seed=1)
    (hidden,) = Document.objects.filter(pk__in=split_hidden_document_ids(project=project)).values_list(
        "external_id", flat=True
    )
    import_gold(alice_client, capture_on_commit, V1)
    # v2 changes every document, the held-back one among them.
    import_gold(
        alice_client,
        capture_on_commit,
        {document_id: [(0, 4, "OTHER_PII")] for document_id in ("d1", "d2", "d3")},
    )
    return hidden
