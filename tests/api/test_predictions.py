"""POST /api/v1/runs/{id}/predictions/: batches checked whole, stored once, safe to retry."""

from __future__ import annotations

import copy

import pytest

from experiments.models import PredictedSpan, PredictedValue, RunDocument
from tests.api.runs_support import (
    EXTRACTION,
    SPANS,
    finalize,
    post_documents,
    read_jsonl,
)

pytestmark = pytest.mark.django_db


def test_a_new_batch_is_created_and_answers_201_with_a_status_per_document(attribute_run, alice_client):
    response = post_documents(alice_client, attribute_run["id"], read_jsonl(EXTRACTION / "llm.jsonl"))

    assert response.status_code == 201
    body = response.json()
    assert body["counts"] == {"created": 3, "unchanged": 0, "replaced": 0}
    assert [d["status"] for d in body["documents"]] == ["created"] * 3
    assert RunDocument.objects.filter(run_id=attribute_run["id"]).count() == 3
    first = RunDocument.objects.get(run_id=attribute_run["id"], document__external_id="1001")
    assert first.input_tokens == 812
    assert first.timings == {"document_preparation": 0.05, "llm_extraction": 2.4}
    assert PredictedValue.objects.filter(run_document=first).count() == 4
    failed = RunDocument.objects.get(run_id=attribute_run["id"], document__external_id="1003")
    assert failed.status == "failed"
    assert failed.error == "provider timeout after 60 s"


def test_the_same_batch_again_changes_nothing_and_says_unchanged(attribute_run, alice_client):
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    post_documents(alice_client, attribute_run["id"], documents)
    values_before = list(PredictedValue.objects.order_by("id").values_list("id", flat=True))

    # The same content with its keys in another order is the same content.
    reordered = [dict(reversed(list(document.items()))) for document in documents]
    response = post_documents(alice_client, attribute_run["id"], reordered)

    assert response.status_code == 200
    assert response.json()["counts"] == {"created": 0, "unchanged": 3, "replaced": 0}
    assert list(PredictedValue.objects.order_by("id").values_list("id", flat=True)) == values_before


def test_different_content_for_a_posted_document_is_a_conflict_and_nothing_is_stored(
    attribute_run, alice_client
):
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    post_documents(alice_client, attribute_run["id"], documents[:1])
    changed = copy.deepcopy(documents[0])
    changed["annotations"][1]["output_data"] = "Kenya"

    response = post_documents(alice_client, attribute_run["id"], [changed, documents[1]])

    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "prediction_conflict"
    assert body["conflicts"] == [
        {
            "index": 0,
            "document_id": "1001",
            "field": None,
            "message": "posted before with different content; send ?replace=true to replace it",
        }
    ]
    # Whole batch or nothing: 1002 was not stored either.
    assert RunDocument.objects.filter(run_id=attribute_run["id"]).count() == 1


def test_replace_true_replaces_a_documents_predictions(attribute_run, alice_client):
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    post_documents(alice_client, attribute_run["id"], documents[:2])
    changed = copy.deepcopy(documents[0])
    changed["annotations"] = [{"attribute_id": "102", "output_data": "Kenya"}]
    changed["cost_usd"] = 0.5

    response = post_documents(alice_client, attribute_run["id"], [changed, documents[1]], replace=True)

    assert response.status_code == 201
    assert response.json()["counts"] == {"created": 0, "unchanged": 1, "replaced": 1}
    replaced = RunDocument.objects.get(run_id=attribute_run["id"], document__external_id="1001")
    assert replaced.cost_usd == 0.5
    assert list(replaced.values.values_list("attribute__attribute_id", "output_data")) == [("102", "Kenya")]


def test_a_batch_with_problems_is_refused_whole_with_every_problem_by_document(attribute_run, alice_client):
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    bad = [
        documents[0],
        {"document_id": "no-such-document", "context": "x", "annotations": []},
        {"document_id": "1002", "context": "x", "annotations": [{"attribute_id": "999", "output_data": 1}]},
        {"document_id": "1003", "status": "done", "context": "x", "annotations": []},
    ]

    response = post_documents(alice_client, attribute_run["id"], bad)

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {(error["index"], error["field"]) for error in errors} >= {
        (1, "document_id"),
        (3, "status"),
    }
    assert RunDocument.objects.filter(run_id=attribute_run["id"]).count() == 0


def test_unknown_attribute_ids_are_named_with_their_annotation(attribute_run, alice_client):
    document = {
        "document_id": "1002",
        "context": "x",
        "annotations": [{"attribute_id": "999", "output_data": 1}],
    }

    response = post_documents(alice_client, attribute_run["id"], [document])

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "index": 0,
            "document_id": "1002",
            "field": "annotations[0].attribute_id",
            "message": "unknown attribute '999' (not in the project's schema)",
        }
    ]


def test_a_document_twice_in_one_batch_is_an_error(attribute_run, alice_client):
    document = read_jsonl(EXTRACTION / "llm.jsonl")[0]
    response = post_documents(alice_client, attribute_run["id"], [document, document])

    assert response.status_code == 400
    assert any("duplicate" in error["message"] for error in response.json()["errors"])


def test_it_rejects_offsets_past_the_end_of_the_stored_text(span_run, alice_client):
    response = post_documents(
        alice_client,
        span_run["id"],
        [{"document_id": "letter-3", "entities": [{"start": 10, "end": 500, "entity_type": "PERSON_NAME"}]}],
    )

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "entities[0].end"
    assert "past the end of the text" in response.json()["errors"][0]["message"]


def test_it_rejects_entity_text_that_does_not_match_the_stored_text(span_run, alice_client):
    response = post_documents(
        alice_client,
        span_run["id"],
        [
            {
                "document_id": "letter-1",
                "entities": [{"start": 21, "end": 32, "entity_type": "PERSON_NAME", "text": "Someone"}],
            }
        ],
    )

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "entities[0].text"


def test_it_rejects_a_document_text_that_differs_from_the_stored_one(span_run, alice_client):
    response = post_documents(
        alice_client, span_run["id"], [{"document_id": "letter-1", "text": "Another text", "entities": []}]
    )

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "text"


def test_it_rejects_bad_shapes(span_run, alice_client):
    response = post_documents(
        alice_client,
        span_run["id"],
        [
            {"document_id": "letter-1", "entities": [{"start": "0", "end": 4, "entity_type": "AGE"}]},
            {"document_id": "letter-2"},
            "not an object",
        ],
    )

    assert response.status_code == 400
    assert {error["index"] for error in response.json()["errors"]} == {0, 1, 2}


def test_span_labels_are_mapped_to_canonical_types_and_the_raw_label_is_kept(span_run, alice_client):
    response = post_documents(alice_client, span_run["id"], read_jsonl(SPANS / "spans_predictions.jsonl"))

    assert response.status_code == 201
    john = PredictedSpan.objects.get(
        run_document__run_id=span_run["id"], run_document__document__external_id="letter-2", start=21
    )
    assert (john.entity_type, john.label) == ("PERSON_NAME", "name")


def test_an_idempotency_key_makes_a_retry_return_the_first_answer(attribute_run, alice_client):
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    first = post_documents(alice_client, attribute_run["id"], documents, HTTP_IDEMPOTENCY_KEY="batch-1")
    retry = post_documents(alice_client, attribute_run["id"], documents, HTTP_IDEMPOTENCY_KEY="batch-1")

    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json()
    assert RunDocument.objects.filter(run_id=attribute_run["id"]).count() == 3


def test_an_idempotency_key_reused_for_another_body_is_refused(attribute_run, alice_client):
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    post_documents(alice_client, attribute_run["id"], documents[:1], HTTP_IDEMPOTENCY_KEY="batch-1")

    response = post_documents(
        alice_client, attribute_run["id"], documents[1:], HTTP_IDEMPOTENCY_KEY="batch-1"
    )

    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_key_reused"
    assert RunDocument.objects.filter(run_id=attribute_run["id"]).count() == 1


def test_a_retry_with_its_key_after_finalize_still_gets_the_first_answer(
    attribute_run, alice_client, django_capture_on_commit_callbacks
):
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    first = post_documents(alice_client, attribute_run["id"], documents, HTTP_IDEMPOTENCY_KEY="batch-1")
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, attribute_run["id"])

    retry = post_documents(alice_client, attribute_run["id"], documents, HTTP_IDEMPOTENCY_KEY="batch-1")

    assert retry.status_code == 201
    assert retry.json() == first.json()


def test_posting_to_a_run_that_is_not_open_is_a_conflict(
    attribute_run, alice_client, django_capture_on_commit_callbacks
):
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    post_documents(alice_client, attribute_run["id"], documents[:1])
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, attribute_run["id"])

    response = post_documents(alice_client, attribute_run["id"], documents[1:])

    assert response.status_code == 409
    assert response.json()["code"] == "run_not_open"


def test_more_than_1000_documents_in_a_batch_are_refused(attribute_run, alice_client):
    documents = [{"document_id": f"d{i}", "context": "", "annotations": []} for i in range(1001)]

    response = post_documents(alice_client, attribute_run["id"], documents)

    assert response.status_code == 400
    assert response.json()["max_documents"] == 1000


def test_a_viewer_may_not_post_and_an_outsider_gets_404(attribute_run, bob_client, charlie_client):
    documents = read_jsonl(EXTRACTION / "llm.jsonl")

    assert post_documents(bob_client, attribute_run["id"], documents).status_code == 403
    assert post_documents(charlie_client, attribute_run["id"], documents).status_code == 404
