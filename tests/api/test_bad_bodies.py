"""Bodies the database would refuse answer 400 naming the document and the field, and store nothing.

PostgreSQL refuses NUL characters, NaN, infinities and out-of-range integers that SQLite accepts: run
this module with `scripts/test tests/api/test_bad_bodies.py` to hold it against the real refusals.
"""

from __future__ import annotations

import copy
import json

import pytest

from annotations.models import Job
from experiments.models import ExperimentRun, IdempotencyKey, PredictedSpan, PredictedValue, RunDocument
from tests.api.runs_support import (
    EXTRACTION,
    SPANS,
    post_documents,
    read_jsonl,
)
from tests.services.test_gold_import_fixtures import letters_jsonl, upload

pytestmark = pytest.mark.django_db

NUL = "\x00"


def attribute_document(**changes) -> dict:
    document = copy.deepcopy(read_jsonl(EXTRACTION / "llm.jsonl")[0])
    annotation_changes = changes.pop("annotation", {})
    document["annotations"][0].update(annotation_changes)
    document.update(changes)
    return document


def span_document(**entity_changes) -> dict:
    document = copy.deepcopy(read_jsonl(SPANS / "spans_predictions.jsonl")[0])
    document["entities"][0].update(entity_changes)
    return document


def nothing_stored() -> bool:
    return not (
        RunDocument.objects.exists()
        or PredictedValue.objects.exists()
        or PredictedSpan.objects.exists()
        or IdempotencyKey.objects.exists()
    )


def problem_fields(body: dict) -> set[tuple[str | None, str]]:
    """(document_id, field) of every problem in a 400's `errors`."""
    return {(problem.get("document_id"), problem["field"]) for problem in body["errors"]}


@pytest.mark.parametrize(
    ("changes", "document_id", "field"),
    [
        ({"annotation": {"output_data": f"Ken{NUL}ya"}}, "1001", "documents[0].annotations[0].output_data"),
        ({"annotation": {"reasoning": f"because{NUL}"}}, "1001", "documents[0].annotations[0].reasoning"),
        ({"document_id": f"10{NUL}01"}, f"10{NUL}01", "documents[0].document_id"),
    ],
    ids=["output_data", "reasoning", "document_id"],
)
def test_a_nul_character_in_a_prediction_is_a_400_naming_the_document_and_field(
    attribute_run, alice_client, changes, document_id, field
):
    response = post_documents(alice_client, attribute_run["id"], [attribute_document(**changes)])

    assert response.status_code == 400, response.content
    assert (document_id, field) in problem_fields(response.json())
    assert nothing_stored()


def test_a_nul_character_in_an_entity_type_is_a_400_naming_the_document_and_field(span_run, alice_client):
    response = post_documents(alice_client, span_run["id"], [span_document(entity_type=f"PER{NUL}SON")])

    assert response.status_code == 400, response.content
    assert ("letter-1", "documents[0].entities[0].entity_type") in problem_fields(response.json())
    assert nothing_stored()


def test_json_nested_5000_deep_is_a_400_naming_the_field(attribute_run, alice_client):
    deep = "[" * 5000 + "]" * 5000
    body = '{"documents": [{"document_id": "1001", "annotations": [{"attribute_id": "101", "output_data": '
    body += deep + "}]}]}"

    response = alice_client.post(
        f"/api/v1/runs/{attribute_run['id']}/predictions/", body, content_type="application/json"
    )

    assert response.status_code == 400, response.content
    [problem] = response.json()["errors"]
    assert problem["field"].startswith("documents[0].annotations[0].output_data[0]")
    assert "nested deeper than" in problem["message"]
    assert nothing_stored()


def test_json_nested_past_the_limit_but_parseable_is_a_400_naming_the_document(attribute_run, alice_client):
    nested: list = []
    for _ in range(200):
        nested = [nested]
    document = attribute_document(annotation={"output_data": nested})

    response = post_documents(alice_client, attribute_run["id"], [document])

    assert response.status_code == 400, response.content
    [problem] = response.json()["errors"]
    assert problem["document_id"] == "1001"
    assert problem["field"].startswith("documents[0].annotations[0].output_data[0]")
    assert nothing_stored()


def test_an_integer_no_float_can_hold_in_a_gate_threshold_is_a_400_naming_the_field(
    attribute_run, alice_client
):
    body = '{"checks": [{"metric": "accuracy", "attribute": "101", "min": 1' + "0" * 400 + "}]}"

    response = alice_client.post(
        f"/api/v1/runs/{attribute_run['id']}/gate/", body, content_type="application/json"
    )

    assert response.status_code == 400, response.content
    assert [problem["field"] for problem in response.json()["errors"]] == ["checks[0].min"]


def test_a_label_longer_than_its_column_is_a_400_naming_the_document_and_field(span_run, alice_client):
    response = post_documents(alice_client, span_run["id"], [span_document(entity_type="X" * 201)])

    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_batch"
    [problem] = body["errors"]
    assert (problem["document_id"], problem["field"]) == ("letter-1", "entities[0].entity_type")
    assert "at most" in problem["message"]
    assert nothing_stored()


def test_an_end_offset_past_any_text_without_text_is_a_400_naming_the_document_and_field(
    span_run, alice_client
):
    response = post_documents(alice_client, span_run["id"], [span_document(end=2**62)])

    assert response.status_code == 400, response.content
    [problem] = response.json()["errors"]
    assert (problem["document_id"], problem["field"]) == ("letter-1", "entities[0].end")
    assert nothing_stored()


@pytest.mark.parametrize("number", ["1e309", "-1e309", "NaN", "Infinity", "1" + "0" * 400])
def test_a_number_that_is_not_finite_is_a_400_naming_the_document_and_field(
    attribute_run, alice_client, number
):
    document = attribute_document(annotation={"output_data": 0})
    body = json.dumps({"documents": [document]}).replace('"output_data": 0', f'"output_data": {number}')

    response = alice_client.post(
        f"/api/v1/runs/{attribute_run['id']}/predictions/", body, content_type="application/json"
    )

    assert response.status_code == 400, response.content
    assert ("1001", "documents[0].annotations[0].output_data") in problem_fields(response.json())
    assert nothing_stored()


def test_a_token_count_bigger_than_its_column_is_a_400_naming_the_document_and_field(
    attribute_run, alice_client
):
    response = post_documents(
        alice_client, attribute_run["id"], [attribute_document(input_tokens=12345678901234567890)]
    )

    assert response.status_code == 400, response.content
    [problem] = response.json()["errors"]
    assert (problem["document_id"], problem["field"]) == ("1001", "input_tokens")
    assert nothing_stored()


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def files_in(folder) -> list:
    return [path for path in folder.rglob("*") if path.is_file()] if folder.exists() else []


@pytest.mark.parametrize(
    "label_map",
    [
        json.dumps({f"na{NUL}me": "PERSON_NAME"}),
        json.dumps({"name": f"PERSON{NUL}"}),
        "[" * 5000 + "]" * 5000,
        json.dumps({"name": {"a": [[["PERSON_NAME"]]]}}),
    ],
    ids=["nul-in-key", "nul-in-value", "nested-5000-deep", "nested-value"],
)
def test_a_bad_label_map_is_a_400_naming_it_and_leaves_no_upload(
    project, alice_client, media_root, label_map
):
    response = alice_client.post(
        f"/api/v1/projects/{project.slug}/imports/",
        {"file": upload("letters.jsonl", letters_jsonl()), "label_map": label_map},
        format="multipart",
    )

    assert response.status_code == 400, response.content
    assert "label_map" in response.json()
    assert not Job.objects.exists()
    assert files_in(media_root) == []


def test_an_annotator_name_longer_than_its_column_is_a_400(project, alice_client, media_root):
    response = alice_client.post(
        f"/api/v1/projects/{project.slug}/imports/",
        {"file": upload("letters.jsonl", letters_jsonl()), "annotator": "a" * 151},
        format="multipart",
    )

    assert response.status_code == 400, response.content
    assert "annotator" in response.json()
    assert files_in(media_root) == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": f"run{NUL}"}, "name"),
        ({"model": "m" * 201}, "model"),
        ({"config": {"temperature": f"0.{NUL}"}}, "config.temperature"),
        ({"config": "a: .nan\n"}, "config"),
        ({"config": "a: " + "[" * 2000 + "]" * 2000 + "\n"}, "config"),
        ({"prompts": [{"attribute_id": "101", "prompt": NUL}]}, "prompts[0].prompt"),
    ],
    ids=["nul-in-name", "long-model", "nul-in-config", "nan-in-yaml", "deep-yaml", "nul-in-prompts"],
)
def test_a_run_that_could_not_be_stored_is_a_400_naming_the_field(project, alice_client, body, field):
    response = alice_client.post(
        f"/api/v1/projects/{project.slug}/runs/", {"name": "r", "kind": "spans", **body}, format="json"
    )

    assert response.status_code == 400, response.content
    text = json.dumps(response.json())
    assert field.split(".")[0].split("[")[0] in text
    assert not ExperimentRun.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "p", "slug": "p", "description": f"a{NUL}b"}, "description"),
        ({"name": "p", "slug": "p", "entity_types": ["X" * 101]}, "entity_types"),
        (
            {
                "name": "p",
                "slug": "p",
                "attributes": [
                    {"attribute_id": "1", "label": "l", "type": "bool", "missing_default": float("inf")}
                ],
            },
            "attributes",
        ),
    ],
    ids=["nul-in-description", "long-entity-type", "infinite-default"],
)
def test_a_project_that_could_not_be_stored_is_a_400_naming_the_field(alice_client, body, field):
    from annotations.models import Project

    before = Project.objects.count()
    response = alice_client.post(
        "/api/v1/projects/", json.dumps(body).replace("Infinity", "1e999"), content_type="application/json"
    )

    assert response.status_code == 400, response.content
    assert field in json.dumps(response.json())
    assert Project.objects.count() == before
