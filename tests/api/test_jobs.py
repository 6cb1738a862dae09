"""Jobs: any member reads a job of their project; charlie gets 404, as for a job that does not exist."""

from __future__ import annotations

import pytest

from annotations.models import Job, JobState
from annotations.services import project_create


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
