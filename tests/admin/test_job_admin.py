"""The Job admin: read-only (no add, change or delete), redacted like the API, with a "retry" action."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from annotations.importers.errors import ImportProblem
from annotations.models import Job, JobState, Membership
from annotations.roles import Role
from tests.api.runs_support import span_project_in_development
from tests.services.test_gold_import_fixtures import letters_jsonl, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def root_client(client):
    get_user_model().objects.create_superuser("root", "root@example.org", "root-password")
    client.login(username="root", password="root-password")
    return client


@pytest.fixture
def failed_import(project, alice, settings, tmp_path) -> Job:
    settings.MEDIA_ROOT = tmp_path
    job = Job(
        kind="import",
        project=project,
        created_by=alice,
        state=JobState.FAILED,
        params={"format": "auto", "file_name": "letters.jsonl"},
    )
    job.input_file.save("retry/letters.jsonl", upload("letters.jsonl", letters_jsonl()), save=False)
    job.save()
    return job


def test_a_job_is_view_only_even_for_a_superuser(root_client, failed_import):
    page = root_client.get(f"/admin/annotations/job/{failed_import.pk}/change/")

    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert root_client.get("/admin/annotations/job/add/").status_code == 403
    assert root_client.get(f"/admin/annotations/job/{failed_import.pk}/delete/").status_code == 403
    root_client.post(f"/admin/annotations/job/{failed_import.pk}/change/", {"state": "succeeded"})
    assert Job.objects.get(pk=failed_import.pk).state == JobState.FAILED


def test_staff_see_no_held_back_document_in_a_job(root_client, project, alice):
    span_project_in_development(project, alice)
    secret = ImportProblem(
        "unknown label 'SecretDiagnosisLabel' mapped to OTHER_PII; found in 1 document: 'letter-3'",
        field="entity_type",
        documents=("letter-3",),
    )
    job = Job.objects.create(kind="import", project=project, warnings=[secret.as_dict()])

    page = root_client.get(f"/admin/annotations/job/{job.pk}/change/").content.decode()

    assert "SecretDiagnosisLabel" not in page and "letter-3" not in page
    assert "held back for the test" in page


def test_the_retry_action_queues_a_failed_job_again_and_it_runs(
    root_client, failed_import, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = root_client.post(
            "/admin/annotations/job/", {"action": "retry", "_selected_action": [failed_import.pk]}
        )

    assert response.status_code == 302
    assert Job.objects.get(pk=failed_import.pk).state == JobState.SUCCEEDED


def test_staff_retry_only_the_jobs_of_projects_they_manage(client, project, failed_import):
    frank = get_user_model().objects.create_user("frank", password="frank-password", is_staff=True)
    frank.user_permissions.add(Permission.objects.get(codename="view_job"))
    Membership.objects.create(project=project, user=frank, role=Role.VIEWER)
    client.login(username="frank", password="frank-password")

    client.post("/admin/annotations/job/", {"action": "retry", "_selected_action": [failed_import.pk]})

    assert Job.objects.get(pk=failed_import.pk).state == JobState.FAILED
