"""Jobs: any member reads a job of their project; charlie gets 404, as for a job that does not exist."""

from __future__ import annotations

import importlib
import io
import re

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from rest_framework.test import APIClient

from annotations.models import Job, JobState
from annotations.services import project_create
from tests.api.runs_support import (
    EXTRACTION,
    create_run,
    finalize,
    load_extraction_gold,
    post_documents,
    prompts_as_run_prompts,
    read_jsonl,
)


def test_alice_and_bob_read_a_job_and_charlie_gets_404(
    project, alice, alice_client, bob_client, charlie_client
):
    job = Job.objects.create(
        kind="import",
        project=project,
        created_by=alice,
        state=JobState.FAILED,
        progress_done=2,
        progress_total=4,
        result={},
        errors=[{"message": "bad", "file": "a.jsonl", "line": 3, "document_id": "d1", "field": "text"}],
    )

    for client in (alice_client, bob_client):
        data = client.get(f"/api/v1/jobs/{job.pk}/").data
        assert data["status"] == "failed"
        assert data["progress"] == {"done": 2, "total": 4}
        assert data["errors"][0]["line"] == 3
        assert data["project"] == "letters"
    assert charlie_client.get(f"/api/v1/jobs/{job.pk}/").status_code == 404
    assert charlie_client.get(f"/api/v1/jobs/{job.pk + 1000}/").status_code == 404


def test_a_job_without_a_project_is_seen_by_its_creator_only(alice, alice_client, bob_client):
    job = Job.objects.create(kind="export", created_by=alice)

    assert alice_client.get(f"/api/v1/jobs/{job.pk}/").status_code == 200
    assert bob_client.get(f"/api/v1/jobs/{job.pk}/").status_code == 404


def test_the_project_lists_its_jobs_newest_first_for_members_only(project, alice, bob_client, charlie_client):
    older = Job.objects.create(kind="import", project=project)
    newer = Job.objects.create(kind="import", project=project)
    Job.objects.create(kind="import", project=project_create(user=alice, name="Other", slug="other"))

    listed = bob_client.get("/api/v1/projects/letters/jobs/").data["results"]

    assert [job["id"] for job in listed] == [newer.pk, older.pk]
    assert charlie_client.get("/api/v1/projects/letters/jobs/").status_code == 404


@pytest.mark.parametrize("jobs", [3, 30])
def test_listing_jobs_costs_the_same_queries_for_3_or_30(
    project, alice, bob_client, django_assert_max_num_queries, jobs
):
    Job.objects.bulk_create([Job(kind="import", project=project, created_by=alice) for _ in range(jobs)])

    # Token lookup, its last-used stamp, the caller's membership, one page of jobs with their project.
    with django_assert_max_num_queries(4):
        response = bob_client.get("/api/v1/projects/letters/jobs/")

    assert len(response.data["results"]) == jobs


def test_a_scoring_job_that_warned_is_read_with_its_warnings_as_problems(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    run = create_run(alice_client, prompts=prompts_as_run_prompts())
    # Gold document 1004 has no gold annotations: the scoring warns that it is not scored.
    assert post_documents(alice_client, run["id"], read_jsonl(EXTRACTION / "llm.jsonl")).status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        job_id = finalize(alice_client, run["id"])["job"]["id"]

    detail = bob_client.get(f"/api/v1/jobs/{job_id}/")
    listed = bob_client.get("/api/v1/projects/letters/jobs/")

    assert detail.status_code == 200
    assert listed.status_code == 200
    warning = next(w for w in detail.json()["warnings"] if "not scored" in w["message"])
    assert set(warning) >= {"message", "file", "line", "document_id", "field"}
    assert listed.json()["results"][0]["warnings"] == detail.json()["warnings"]


def test_a_failed_scoring_job_is_read_with_its_error_as_a_problem(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    run = create_run(
        alice_client,
        prompts=prompts_as_run_prompts(),
        config={"custom_evaluation_metrics": ["no_such_metric"]},
    )
    assert post_documents(alice_client, run["id"], read_jsonl(EXTRACTION / "llm.jsonl")).status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        job_id = finalize(alice_client, run["id"])["job"]["id"]

    response = bob_client.get(f"/api/v1/jobs/{job_id}/")

    assert response.status_code == 200
    assert response.json()["status"] == "failed"
    assert "no_such_metric" in response.json()["errors"][0]["message"]


def test_the_migration_turns_stored_strings_into_problems_and_drops_tracebacks(project, bob_client):
    migration = importlib.import_module("annotations.migrations.0003_job_problems_one_shape")
    job = Job.objects.create(
        kind="scoring",
        project=project,
        state=JobState.FAILED,
        warnings=["1 posted document(s) are not in gold version 1 and are ignored"],
        errors=['Traceback (most recent call last):\n  File "x.py", line 1\nOverflowError: fsum'],
    )

    migration.problems_as_dicts(django_apps, None)

    data = bob_client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert data["warnings"][0]["message"].startswith("1 posted document(s)")
    assert data["warnings"][0]["document_id"] is None
    assert data["errors"] == [
        {
            "message": "internal error; see the worker log",
            "file": None,
            "line": None,
            "document_id": None,
            "field": None,
        }
    ]


@pytest.mark.django_db(transaction=True)
def test_every_job_of_the_demo_is_read_and_listed_without_error():
    output = io.StringIO()
    call_command("demo", port=8123, stdout=output, stderr=io.StringIO())
    key = re.search(r"API token:\s+(\S+)", output.getvalue()).group(1)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert Job.objects.filter(kind="scoring").exclude(warnings=[]).exists()
    for job in Job.objects.all():
        assert client.get(f"/api/v1/jobs/{job.pk}/").status_code == 200
    for slug in Job.objects.values_list("project__slug", flat=True).distinct():
        assert client.get(f"/api/v1/projects/{slug}/jobs/").status_code == 200
