"""The OpenAPI description, operation by operation: what a pipeline needs to call the API from it alone.

Every operation that takes a body declares its schema with an example; every operation answers a 2xx
with a schema; every query parameter an operation takes is documented, and no other is accepted.
"""

from __future__ import annotations

import re

import pytest
from django.urls import resolve

from evalproject.api import ApiView, query_parameter_names

pytestmark = pytest.mark.django_db

WRITE_METHODS = {"post", "put", "patch"}
# Operations that take no body at all.
BODYLESS = {"jobs_retry", "project_agreement_create", "webhooks_ping"}


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:
    from rest_framework.test import APIClient

    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def operations(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                yield path, method, operation


def sample_url(path: str) -> str:
    """The path with its placeholders filled in, to resolve it to its view."""
    return re.sub(r"\{[^}]+\}", lambda match: "slug" if match.group() == "{slug}" else "1", path)


def test_every_operation_that_takes_a_body_declares_its_schema_with_an_example(schema):
    missing = []
    for path, method, operation in operations(schema):
        if method not in WRITE_METHODS or operation["operationId"] in BODYLESS:
            continue
        content = operation.get("requestBody", {}).get("content", {})
        if not content:
            missing.append(f"{method.upper()} {path}: no request body")
            continue
        for media_type, body in content.items():
            if "schema" not in body:
                missing.append(f"{method.upper()} {path} ({media_type}): no schema")
            if not body.get("examples"):
                missing.append(f"{method.upper()} {path} ({media_type}): no example")

    assert missing == []


def test_every_field_of_a_request_body_is_described(schema):
    components = schema["components"]["schemas"]
    undescribed = []
    for path, method, operation in operations(schema):
        for media_type, body in operation.get("requestBody", {}).get("content", {}).items():
            reference = body["schema"].get("$ref", "")
            component = components.get(reference.rsplit("/", 1)[-1], {})
            for name, field in component.get("properties", {}).items():
                if not field.get("description") and "$ref" not in field and "allOf" not in field:
                    undescribed.append(f"{method.upper()} {path} ({media_type}): {name}")

    assert undescribed == []


def test_every_operation_answers_a_2xx_with_a_schema(schema):
    missing = []
    for path, method, operation in operations(schema):
        successes = {code: answer for code, answer in operation["responses"].items() if code.startswith("2")}
        if not successes:
            missing.append(f"{method.upper()} {path}: no 2xx")
        for code, answer in successes.items():
            if code == "204":
                continue
            content = answer.get("content", {})
            if not content or not all("schema" in body for body in content.values()):
                missing.append(f"{method.upper()} {path}: {code} has no body schema")

    assert missing == []


def test_every_query_parameter_an_operation_takes_is_documented_and_no_other(schema):
    differences = []
    for path, method, operation in operations(schema):
        view_class = resolve(sample_url(path)).func.view_class
        documented = {
            parameter["name"] for parameter in operation.get("parameters", []) if parameter["in"] == "query"
        }
        accepted = set(query_parameter_names(view_class, method))
        if documented != accepted:
            differences.append(
                f"{method.upper()} {path}: documented {sorted(documented)}, accepted {sorted(accepted)}"
            )

    assert differences == []


def test_every_query_parameter_is_described(schema):
    undescribed = [
        f"{method.upper()} {path}: {parameter['name']}"
        for path, method, operation in operations(schema)
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query" and not parameter.get("description")
    ]

    assert undescribed == []


def test_every_api_view_declares_its_query_parameters_through_api_view(schema):
    views = {resolve(sample_url(path)).func.view_class for path, _, _ in operations(schema)}

    assert {view.__name__ for view in views if not issubclass(view, ApiView)} == set()


def test_the_comparison_filters_are_documented_as_query_parameters(schema):
    operation = schema["paths"]["/api/v1/runs/{run_id}/comparison/"]["get"]
    names = {parameter["name"] for parameter in operation["parameters"] if parameter["in"] == "query"}

    assert names >= {
        "scoring",
        "attribute",
        "match_status",
        "document",
        "entity_type",
        "attribute_presence",
        "format",
        "cursor",
        "page_size",
    }
