"""Jobs: any member reads a job of their project; charlie gets 404, as for a job that does not exist."""

from __future__ import annotations

import importlib
import io
import json
import re

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from annotations.importers.errors import ImportProblem
from annotations.models import Job, JobState, Membership, Project
from annotations.roles import Role
from annotations.services import project_create
from tests.api.runs_support import (
    SPANS,
    create_run,
    finalize,
    posted_extraction_run,
    read_jsonl,
    span_project_in_development,
)
from tests.conftest import token_client
from tests.importers.test_span_fixtures import jsonl_bytes, jsonl_line
from tests.services.test_gold_import_fixtures import upload


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
        assert data["progress"] == {"done": 2, "total": 4, "chunks_done": 0, "chunks_total": 0}
        assert data["errors"][0]["line"] == 3
        assert data["project"] == "letters"
    assert charlie_client.get(f"/api/v1/jobs/{job.pk}/").status_code == 404
    assert charlie_client.get(f"/api/v1/jobs/{job.pk + 1000}/").status_code == 404


def test_a_scoring_job_reads_its_progress_in_documents_and_in_chunks(project, alice, bob_client):
    job = Job.objects.create(
        kind="scoring",
        project=project,
        created_by=alice,
        state=JobState.RUNNING,
        progress_done=1000,
        progress_total=2500,
        chunks_done=2,
        chunks_total=5,
    )

    progress = bob_client.get(f"/api/v1/jobs/{job.pk}/").data["progress"]
    listed = bob_client.get("/api/v1/projects/letters/jobs/").data["results"][0]["progress"]

    assert progress == listed == {"done": 1000, "total": 2500, "chunks_done": 2, "chunks_total": 5}


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


def test_the_job_list_rejects_an_unknown_query_parameter_naming_it(project, bob_client):
    response = bob_client.get("/api/v1/projects/letters/jobs/", {"state": "failed"})

    assert response.status_code == 400
    assert "state" in response.json()


def test_the_job_list_pages_by_cursor(project, bob_client):
    jobs = [Job.objects.create(kind="import", project=project) for _ in range(3)]

    first = bob_client.get("/api/v1/projects/letters/jobs/", {"page_size": 2}).json()
    second = bob_client.get(first["next"]).json()

    assert [job["id"] for job in first["results"] + second["results"]] == [job.pk for job in reversed(jobs)]


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
    # Gold document 1004 has no gold annotations: the scoring warns that it is not scored.
    run = posted_extraction_run(project, alice_client)
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
    run = posted_extraction_run(
        project, alice_client, config={"custom_evaluation_metrics": ["no_such_metric"]}
    )
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


def test_an_auditor_reads_neither_a_job_nor_the_job_list(project, alice):
    """The auditor reads the split audit only: the job and the list agree (403 both)."""
    erin = get_user_model().objects.create_user("erin")
    Membership.objects.create(project=project, user=erin, role=Role.AUDITOR)
    job = Job.objects.create(kind="import", project=project, created_by=alice)
    erin_client = token_client(erin)

    assert erin_client.get(f"/api/v1/jobs/{job.pk}/").status_code == 403
    assert erin_client.get("/api/v1/projects/letters/jobs/").status_code == 403


@pytest.fixture
def held_back_project(project, alice):
    """letter-1 and letter-2 in development; letter-3 is held back for the test."""
    return span_project_in_development(project, alice)


def _unknown_label_warning(label: str, documents: list[str]) -> dict:
    """The warning of the label reader (annotations.importers.labels) for an unknown label."""
    named = ", ".join(repr(document) for document in documents)
    return ImportProblem(
        f"unknown label {label!r} mapped to OTHER_PII (add it to a label map to choose its type); "
        f"found in {len(documents)} document(s): {named}",
        file="letters.jsonl",
        field="entity_type",
        documents=tuple(documents),
    ).as_dict()


def test_a_problem_about_held_back_documents_only_is_withheld_from_everyone(
    held_back_project, alice, alice_client, bob_client
):
    job = Job.objects.create(
        kind="import",
        project=held_back_project,
        created_by=alice,
        state=JobState.FAILED,
        warnings=[_unknown_label_warning("SecretDiagnosisLabel", ["letter-3"])],
        errors=[{"message": "bad offset in 'letter-3'", "document_id": "letter-3", "line": 3}],
    )

    for client in (alice_client, bob_client):
        for data in (
            client.get(f"/api/v1/jobs/{job.pk}/").json(),
            client.get("/api/v1/projects/letters/jobs/").json()["results"][0],
        ):
            served = json.dumps(data)
            assert "letter-3" not in served
            assert "SecretDiagnosisLabel" not in served
            assert "held back for the test" in data["warnings"][0]["message"]
            assert "held back for the test" in data["errors"][0]["message"]


def test_a_problem_about_visible_and_held_back_documents_names_the_visible_ones_only(
    held_back_project, alice, bob_client
):
    job = Job.objects.create(
        kind="import",
        project=held_back_project,
        warnings=[_unknown_label_warning("Nickname", ["letter-1", "letter-3"])],
    )

    warning = bob_client.get(f"/api/v1/jobs/{job.pk}/").json()["warnings"][0]

    assert warning["documents"] == ["letter-1"]
    assert "'letter-1'" in warning["message"] and "letter-3" not in warning["message"]


def test_problems_name_every_document_once_the_project_is_finished(held_back_project, alice, bob_client):
    job = Job.objects.create(
        kind="import",
        project=held_back_project,
        warnings=[_unknown_label_warning("SecretDiagnosisLabel", ["letter-3"])],
    )
    Project.objects.filter(pk=held_back_project.pk).update(phase="finished")

    warning = bob_client.get(f"/api/v1/jobs/{job.pk}/").json()["warnings"][0]

    assert warning["documents"] == ["letter-3"]
    assert "SecretDiagnosisLabel" in warning["message"]


def test_an_import_with_thousands_of_unknown_labels_lists_a_hundred_and_counts_the_rest(
    project, alice_client, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    text = "x" * 3000
    spans = [(i, i + 1, f"Label{i}") for i in range(2500)]
    content = jsonl_bytes([jsonl_line("many-labels", text, spans)])
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(
            "/api/v1/projects/letters/imports/",
            {"file": upload("many.jsonl", content), "format": "jsonl"},
            format="multipart",
        )

    job = alice_client.get(f"/api/v1/jobs/{response.json()['id']}/").json()

    assert job["status"] == "succeeded", job["errors"]
    assert len(job["warnings"]) == 101
    assert job["warnings"][-1]["message"] == "... and 2400 more warnings, not listed"


def test_an_import_warning_about_an_unknown_label_in_a_held_back_document_is_withheld(
    held_back_project, alice_client, bob_client, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    letters = {line["document_id"]: line for line in read_jsonl(SPANS / "spans_gold.jsonl")}
    secret = letters["letter-3"]
    secret["entities"] = [*secret["entities"], {"start": 0, "end": 5, "entity_type": "SecretDiagnosisLabel"}]
    content = "\n".join(json.dumps(line, ensure_ascii=False) for line in letters.values()).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(
            "/api/v1/projects/letters/imports/",
            {"file": upload("letters.jsonl", content), "format": "jsonl"},
            format="multipart",
        )
    job = Job.objects.get(pk=response.json()["id"])
    assert "SecretDiagnosisLabel" in json.dumps(job.warnings)  # stored whole, for after acceptance

    for client in (alice_client, bob_client):
        served = json.dumps(client.get(f"/api/v1/jobs/{job.pk}/").json())
        assert "SecretDiagnosisLabel" not in served and "letter-3" not in served


def test_a_runs_scoring_errors_are_redacted_as_its_job_is(held_back_project, alice, alice_client):
    from experiments.models import ExperimentRun

    run = create_run(alice_client, kind="spans")
    job = Job.objects.create(
        kind="scoring",
        project=held_back_project,
        state=JobState.FAILED,
        errors=[{"message": "bad span in 'letter-3'", "document_id": "letter-3"}],
    )
    ExperimentRun.objects.filter(pk=run["id"]).update(scoring_job=job, status="failed")

    progress = alice_client.get(f"/api/v1/runs/{run['id']}/").json()["progress"]

    assert "letter-3" not in json.dumps(progress)
