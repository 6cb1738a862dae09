"""Query parameters: an operation answers 400 to one it does not take, naming it and listing those it
does, rather than ignoring it (a misspelt filter used to return every row)."""

from __future__ import annotations

import re

import pytest
from django.urls import resolve

from evalproject.api import ApiView

pytestmark = pytest.mark.django_db


def get_operations(client) -> list[str]:
    """The URL of every GET operation of the API served by an ApiView, with its placeholders filled."""
    paths = client.get("/api/schema/", {"format": "json"}).json()["paths"]
    urls = []
    for path, item in paths.items():
        if "get" not in item:
            continue
        url = re.sub(r"\{\w+\}", "1", re.sub(r"\{slug\}", "letters", path))
        if issubclass(resolve(url).func.view_class, ApiView):
            urls.append(url)
    return urls


def test_every_get_operation_refuses_a_query_parameter_it_does_not_take(project, alice_client):
    urls = get_operations(alice_client)
    assert len(urls) > 10

    answers = {url: alice_client.get(url, {"bogus": "1"}) for url in urls}

    assert {url: answer.status_code for url, answer in answers.items()} == dict.fromkeys(urls, 400)
    for answer in answers.values():
        assert answer.json()["bogus"][0].startswith("unknown query parameter; this operation takes: ")


def test_the_error_lists_the_parameters_the_operation_takes(project, alice_client):
    response = alice_client.get("/api/v1/projects/letters/runs/", {"knd": "spans"})

    assert response.status_code == 400
    assert response.json() == {
        "knd": ["unknown query parameter; this operation takes: cursor, kind, page_size, status."]
    }


def test_a_write_refuses_a_query_parameter_it_does_not_take(project, alice_client):
    response = alice_client.post(
        "/api/v1/projects/letters/runs/?dry_run=1", {"name": "r", "kind": "spans"}, format="json"
    )

    assert response.status_code == 400
    assert "dry_run" in response.json()
