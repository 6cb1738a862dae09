"""Whatever JSON a manager posts to any write endpoint, the answer is never a 5xx.

Bodies are arbitrary JSON (NaN, infinities, NUL characters, lone surrogates, deep nesting, huge numbers),
and objects whose keys are the fields the endpoint documents, with arbitrary values, so that the
examples reach past the first missing field. Run it with `scripts/test` to hold it against PostgreSQL.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotations.models import Document, EvaluationStrategy, Membership, Project, ProjectPhase
from annotations.roles import Role
from experiments.models import ExperimentRun
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
from tests.services.test_gold_import_fixtures import upload
from webhooks.services import webhook_create

pytestmark = pytest.mark.django_db

EXAMPLES_PER_ENDPOINT = 30

texts = st.text(alphabet=st.characters(codec=None), max_size=30) | st.sampled_from(
    ["", "\x00", "a\x00b", "\ud800", "x" * 300, "spans", "attributes", "letters", "1001", "PERSON_NAME"]
)
numbers = (
    st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0, 1, -1, 2**31, 2**62, 2**63, 10**20, 10**400, -(10**400), 1e308, 1.7e308])
)
scalars = st.none() | st.booleans() | numbers | texts
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)


def objects_with(fields: dict[str, st.SearchStrategy]) -> st.SearchStrategy[dict]:
    """Objects with any of `fields` (each with its own values, or arbitrary JSON), plus stray keys."""
    return st.fixed_dictionaries(
        {}, optional={name: values | json_values for name, values in fields.items()}
    ) | st.dictionaries(texts, json_values, max_size=3)


entity = objects_with(
    {
        "start": numbers,
        "end": numbers,
        "entity_type": texts | st.just("PERSON_NAME"),
        "text": texts,
    }
)
annotation = objects_with(
    {
        "attribute_id": st.sampled_from(["101", "102", "103", "104"]) | texts,
        "output_data": json_values,
        "additional_text": texts,
        "reasoning": texts,
    }
)
posted_document = objects_with(
    {
        "document_id": st.sampled_from(["1001", "1002", "letter-1", "letter-2"]) | texts,
        "text": texts,
        "context": texts,
        "entities": st.lists(entity, max_size=3),
        "annotations": st.lists(annotation, max_size=3),
        "status": st.sampled_from(["ok", "failed"]) | texts,
        "error": texts,
        "input_tokens": numbers,
        "output_tokens": numbers,
        "cost_usd": numbers,
        "timings": st.dictionaries(texts, numbers, max_size=3),
    }
)
attribute_input = objects_with(
    {
        "attribute_id": texts,
        "label": texts,
        "type": st.sampled_from(["bool", "string", "integer", "float", "list", "dict"]) | texts,
        "prompt": texts,
        "missing_default": json_values,
    }
)
project_settings = objects_with(
    {
        "edit_distance_match_threshold": numbers,
        "number_format": texts,
        "gold_annotator": texts,
        "rescore_on_new_gold": json_values,
    }
)
gate_check = objects_with(
    {
        "metric": st.sampled_from(["accuracy", "micro.chars.all.recall"]) | texts,
        "attribute": texts,
        "min": numbers,
        "max": numbers,
        "on": st.sampled_from(["estimate", "lower_bound", "upper_bound"]) | texts,
        "baseline": texts,
        "margin": numbers,
        "direction": texts,
    }
)

# (method, URL, the body's fields) of every JSON write endpoint; the runs are those of the fixture.
ENDPOINTS = {
    "projects_create": (
        "post",
        "/api/v1/projects/",
        {
            "name": texts,
            "slug": texts,
            "description": texts,
            "settings": project_settings,
            "strategy": st.sampled_from(["null", "dev_val_test"]) | texts,
            "attributes": st.lists(attribute_input, max_size=3),
            "entity_types": st.lists(texts, max_size=3),
        },
    ),
    "projects_update": (
        "patch",
        "/api/v1/projects/letters/",
        {"name": texts, "description": texts, "settings": project_settings, "strategy": texts},
    ),
    "members_upsert": (
        "post",
        "/api/v1/projects/letters/members/",
        {
            "username": st.sampled_from(["bob", "charlie"]) | texts,
            "role": st.sampled_from(list(Role.values)) | texts,
        },
    ),
    "runs_create": (
        "post",
        "/api/v1/projects/letters/runs/",
        {
            "name": texts,
            "kind": st.sampled_from(["spans", "attributes"]) | texts,
            "source": texts,
            "config": json_values | texts.map(lambda text: f"a: {text}\n"),
            "prompts": st.lists(json_values, max_size=3),
            "model": texts,
            "provider": texts,
            "stage": texts,
        },
    ),
    "predictions_attributes": (
        "post",
        "/api/v1/runs/{attribute_run}/predictions/",
        {"documents": st.lists(posted_document, max_size=3)},
    ),
    "predictions_spans": (
        "post",
        "/api/v1/runs/{span_run}/predictions/",
        {"documents": st.lists(posted_document, max_size=3)},
    ),
    "splits_assign_development": (
        "post",
        "/api/v1/projects/split/splits/development/",
        {
            "n": numbers,
            "seed": numbers,
            "document_ids": st.lists(texts, max_size=3),
            "stratify_by": texts,
            "reason": texts,
        },
    ),
    "splits_move_to_validation": (
        "post",
        "/api/v1/projects/split/splits/validation/",
        {"n": numbers, "seed": numbers, "run": numbers, "stratify_by": texts, "reason": texts},
    ),
    "splits_accept": ("post", "/api/v1/projects/split/splits/accept/", {"reason": texts}),
    "splits_reject": ("post", "/api/v1/projects/split/splits/reject/", {"reason": texts}),
    "runs_finalize": ("post", "/api/v1/runs/{attribute_run}/finalize/", {"allow_empty": json_values}),
    "runs_rescore": (
        "post",
        "/api/v1/runs/{scored_run}/rescore/",
        {"gold_version": st.sampled_from(["latest", 1, 2]) | numbers | texts},
    ),
    "project_agreement_create": ("post", "/api/v1/projects/letters/agreement/", {}),
    "runs_gate": ("post", "/api/v1/runs/{scored_run}/gate/", {"checks": st.lists(gate_check, max_size=3)}),
    "webhooks_create": (
        "post",
        "/api/v1/projects/letters/webhooks/",
        {
            "url": st.sampled_from(["https://ci.example.org/hook", "ftp://example.org/"]) | texts,
            "description": texts,
        },
    ),
    "webhooks_ping": ("post", "/api/v1/projects/letters/webhooks/{webhook}/ping/", {}),
    "jobs_retry": ("post", "/api/v1/jobs/{scoring_job}/retry/", {}),
    "documents_remove_from_gold": (
        "delete",
        "/api/v1/projects/letters/documents/",
        {"document_ids": st.lists(st.sampled_from(["letter-1", "1001"]) | texts, max_size=3)},
    ),
    "project_purge": ("post", "/api/v1/projects/split/purge/", {"confirm": st.just("split") | texts}),
}
# The operation each endpoint above calls, where its name is not the operation's; the import form
# (`imports_create`) has its own test below.
OPERATION_OF = {"predictions_attributes": "predictions_create", "predictions_spans": "predictions_create"}


@pytest.fixture
def runs(project, alice, alice_client, django_capture_on_commit_callbacks, settings) -> dict[str, int]:
    """In alice's project: an open attribute run and an open span run with predictions, a scored
    attribute run, and a webhook whose receiver refuses connections at once (a ping is tried once); and
    a dev_val_test project, `split`, with six documents."""
    load_extraction_gold(project)
    predictions = read_jsonl(EXTRACTION / "llm.jsonl")
    scored_run = create_run(alice_client, prompts=prompts_as_run_prompts())
    post_documents(alice_client, scored_run["id"], predictions)
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, scored_run["id"])
    attribute_run = create_run(alice_client, prompts=prompts_as_run_prompts())
    post_documents(alice_client, attribute_run["id"], predictions)
    load_span_gold(project)
    span_run = create_run(alice_client, kind="spans")
    post_documents(alice_client, span_run["id"], read_jsonl(SPANS / "spans_predictions.jsonl"))
    split = Project.objects.create(
        name="Split",
        slug="split",
        created_by=alice,
        strategy=EvaluationStrategy.DEV_VAL_TEST,
        phase=ProjectPhase.DEVELOPMENT,
    )
    Membership.objects.create(project=split, user=alice, role=Role.MANAGER)
    for number in range(6):
        Document.objects.create(project=split, external_id=f"s-{number}", text=f"Letter {number}.")
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    webhook = webhook_create(project=project, user=alice, url="http://127.0.0.1:9/refused")
    return {
        "webhook": webhook.pk,
        "attribute_run": attribute_run["id"],
        "span_run": span_run["id"],
        "scored_run": scored_run["id"],
        "scoring_job": ExperimentRun.objects.get(pk=scored_run["id"]).scoring_job_id,
    }


def test_every_json_write_operation_is_covered(client):
    schema = client.get("/api/schema/", {"format": "json"}).json()
    writes = {
        operation["operationId"]
        for item in schema["paths"].values()
        for method, operation in item.items()
        if method in {"post", "put", "patch"} or (method == "delete" and "requestBody" in operation)
    }

    assert writes - {"imports_create"} == {OPERATION_OF.get(name, name) for name in ENDPOINTS}


def json_text(value) -> str:
    # allow_nan: NaN and Infinity are sent as the literals some clients write.
    return json.dumps(value, allow_nan=True)


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
@settings(
    max_examples=EXAMPLES_PER_ENDPOINT,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_json_body_gets_a_server_error(runs, alice_client, endpoint, data):
    method, url, fields = ENDPOINTS[endpoint]
    body = data.draw(objects_with(fields) | json_values, label="body")

    response = getattr(alice_client, method)(
        url.format(**runs), json_text(body), content_type="application/json"
    )

    assert response.status_code < 500, (endpoint, body, response.content[:500])


@settings(
    max_examples=EXAMPLES_PER_ENDPOINT,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    fields=st.fixed_dictionaries(
        {},
        optional={
            "format": st.sampled_from(["auto", "jsonl", "cas", "eppi", "prompts_csv"]) | texts,
            "label_map": texts | json_values.map(json_text),
            "annotator": texts,
        },
    ),
    content=st.binary(max_size=200),
    name=st.sampled_from(["letters.jsonl", "gold.json", "prompts.csv", "x" * 120 + ".jsonl"]),
)
def test_no_import_form_gets_a_server_error(runs, alice_client, settings_media_root, fields, content, name):
    # A form is encoded as UTF-8, which has no lone surrogates: the client could not send them.
    fields = {key: re.sub("[\ud800-\udfff]", "", value) for key, value in fields.items()}
    response = alice_client.post(
        "/api/v1/projects/letters/imports/", {"file": upload(name, content), **fields}, format="multipart"
    )

    assert response.status_code < 500, (fields, name, response.content[:500])


@pytest.fixture
def settings_media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT
