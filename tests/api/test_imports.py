"""Imports over the API: annotators and managers upload (202 and a job); bob (viewer) may not."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotations.models import Document, Job, JobState, Membership
from annotations.roles import Role
from tests.conftest import token_client
from tests.services.test_gold_import_fixtures import (
    letters_jsonl,
    media_root,  # noqa: F401 (a fixture)
    upload,
)

IMPORTS = "/api/v1/projects/letters/imports/"

pytestmark = pytest.mark.usefixtures("media_root")


def post_file(client, content: bytes = b"", name: str = "letters.jsonl", **fields):
    return client.post(
        IMPORTS, {"file": upload(name, content or letters_jsonl()), **fields}, format="multipart"
    )


def test_alice_uploads_gold_and_gets_a_job_that_runs(
    project, alice_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = post_file(alice_client)

    assert response.status_code == 202, response.data
    assert response.data["kind"] == "import"
    assert response.data["status"] == "queued"
    job = alice_client.get(f"/api/v1/jobs/{response.data['id']}/").data
    assert job["status"] == "succeeded", job["errors"]
    assert job["result"]["documents_created"] == 3
    assert job["progress"]["done"] == job["progress"]["total"] > 0
    assert Document.objects.filter(project=project).count() == 3


def test_an_annotator_may_import(project):
    dana = get_user_model().objects.create_user("dana")
    Membership.objects.create(project=project, user=dana, role=Role.ANNOTATOR)

    assert post_file(token_client(dana)).status_code == 202


def test_bob_the_viewer_may_not_import_and_charlie_gets_404(project, bob_client, charlie_client):
    assert post_file(bob_client).status_code == 403
    assert post_file(charlie_client).status_code == 404
    assert not Job.objects.exists()


def test_a_read_only_token_may_not_import(project, alice):
    assert post_file(token_client(alice, read_only=True)).status_code == 403
    assert not Job.objects.exists()


def test_an_oversized_upload_gets_413_naming_the_limit(project, alice_client, settings):
    settings.UPLOAD_MAX_BYTES = 100

    response = post_file(alice_client, b"x" * 101)

    assert response.status_code == 413
    assert "100 bytes" in response.data["detail"]
    assert not Job.objects.exists()


def test_an_upload_over_the_limit_is_refused_by_its_declared_length_before_reading(
    project, alice_client, settings
):
    settings.UPLOAD_MAX_BYTES = 10

    response = alice_client.post(
        IMPORTS, data=b"x" * 100_000, content_type="multipart/form-data; boundary=xyz"
    )

    assert response.status_code == 413
    assert "100000 bytes" in response.data["detail"] and "10 bytes" in response.data["detail"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"format": "xml"}, "format"),
        ({"label_map": '{"Kennung": "SHOE_SIZE"}'}, "label_map"),
        ({"label_map": "not json"}, "label_map"),
    ],
)
def test_a_bad_format_or_label_map_is_refused_at_once(project, alice_client, fields, field):
    response = post_file(alice_client, **fields)

    assert response.status_code == 400
    assert field in response.data
    assert not Job.objects.exists()


def test_a_file_whose_format_cannot_be_told_fails_the_job_asking_for_a_format(
    project, alice_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = post_file(alice_client, b"hello", name="notes.txt")

    job = Job.objects.get(pk=response.data["id"])
    assert job.state == JobState.FAILED
    assert "format=" in job.errors[0]["message"]


def test_without_a_file_the_request_is_refused(project, alice_client):
    response = alice_client.post(IMPORTS, {"format": "jsonl"}, format="multipart")

    assert response.status_code == 400
    assert "file" in response.data
