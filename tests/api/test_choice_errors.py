"""A wrong choice, anywhere in the API, is a 400 that lists the valid values."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.django_db


def test_a_wrong_choice_in_a_body_or_a_query_lists_the_valid_ones(project, alice_client):
    listed = alice_client.get("/api/v1/projects/letters/runs/", {"kind": "span"})
    created = alice_client.post(
        "/api/v1/projects/letters/runs/", {"name": "r", "kind": "span"}, format="json"
    )

    expected = ['"span" is not a valid choice; expected one of: spans, attributes.']
    assert listed.json()["kind"] == created.json()["kind"] == expected


def test_a_wrong_role_lists_the_roles(project, alice_client):
    response = alice_client.post(
        "/api/v1/projects/letters/members/", {"username": "bob", "role": "owner"}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["role"] == [
        '"owner" is not a valid choice; expected one of: viewer, annotator, pipeline, manager, auditor.'
    ]


def test_every_api_module_takes_its_choice_fields_from_evalproject_validation():
    """DRF's own ChoiceField says only `"x" is not a valid choice`: the API uses the one that lists them."""
    modules = sorted(path for path in PROJECT_ROOT.glob("*/api/*.py") if path.parts[-3] != "tests")
    assert modules
    offenders = [
        str(path.relative_to(PROJECT_ROOT))
        for path in modules
        if "serializers.ChoiceField(" in Path(path).read_text(encoding="utf-8")
        or "serializers.MultipleChoiceField(" in Path(path).read_text(encoding="utf-8")
    ]

    assert offenders == []
