"""The OpenAPI schema covers the project, member, document, import and job endpoints, and is valid."""

from __future__ import annotations

from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

ANNOTATIONS_PATHS = [
    "/api/v1/projects/",
    "/api/v1/projects/{slug}/",
    "/api/v1/projects/{slug}/members/",
    "/api/v1/projects/{slug}/documents/",
    "/api/v1/projects/{slug}/imports/",
    "/api/v1/projects/{slug}/jobs/",
    "/api/v1/jobs/{job_id}/",
]


def test_the_schema_is_served_and_names_every_endpoint(client, db):
    response = client.get("/api/schema/", {"format": "json"})

    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in ANNOTATIONS_PATHS:
        assert path in paths
    assert set(paths["/api/v1/projects/{slug}/"]) >= {"get", "patch"}
    assert (
        "multipart/form-data" in paths["/api/v1/projects/{slug}/imports/"]["post"]["requestBody"]["content"]
    )


def test_the_schema_of_these_endpoints_is_valid_openapi_without_warnings(db, capsys):
    generator = SchemaGenerator(patterns=None, urlconf="annotations.urls")
    schema = generator.get_schema(request=None, public=True)

    validate_schema(schema)
    complaints = capsys.readouterr().err
    assert "Warning" not in complaints
    assert "Error" not in complaints


def test_the_docs_page_is_served(client, db):
    assert client.get("/api/docs/").status_code == 200
