"""PostgreSQL restarted while a worker imports or scores: the task retries, resuming its claim, and the
job ends with exactly one set of rows."""

from __future__ import annotations

import time

import pytest

from annotations.models import GoldVersion, Job
from annotations.services import import_job_create
from metrics.models import ComparisonRow, MetricValue, Scoring, ScoringChunk
from tests.api.runs_support import SPANS, create_run, load_span_gold, post_documents, read_jsonl
from tests.conftest import token_client
from tests.faults.conftest import wait_for, wait_until_finished
from tests.services.test_gold_import_fixtures import letters_jsonl, upload

pytestmark = [pytest.mark.faults, pytest.mark.worker]

DOWN_SECONDS = 5


def test_an_import_survives_a_database_restart_and_writes_its_gold_once(project, alice, services, workers):
    workers("importer", EVALPROJECT_TEST_IMPORT_DELAY="4")
    job = import_job_create(project=project, user=alice, upload=upload("letters.jsonl", letters_jsonl()))
    wait_for(lambda: Job.objects.filter(pk=job.pk, state="running").exists(), 30, "the import to start")

    services.postgres_stop()
    time.sleep(DOWN_SECONDS)
    services.postgres_start()
    back = time.monotonic()

    job = wait_until_finished(job.pk, since=back)
    assert job.state == "succeeded", job.errors
    assert GoldVersion.objects.filter(project=project).count() == 1
    assert job.result["documents_created"] == 3


# A chord of chunk tasks, each retrying the database error under the job's claim, or writing nothing
# once the dispatcher has claimed the silent job again.
def test_a_scoring_survives_a_database_restart_and_stores_one_set_of_rows(project, alice, services, workers):
    load_span_gold(project)
    client = token_client(alice)
    run = create_run(client, kind="spans")
    assert post_documents(client, run["id"], read_jsonl(SPANS / "spans_predictions.jsonl")).status_code == 201
    workers("scorer", EVALPROJECT_TEST_SCORING_DELAY="1.5", SCORING_CHUNK_DOCUMENTS="1")
    job_id = client.post(f"/api/v1/runs/{run['id']}/finalize/").json()["job"]["id"]
    wait_for(
        lambda: Job.objects.filter(pk=job_id, state="running", progress_done__gte=1).exists(),
        30,
        "the scoring to be part-way through",
    )

    services.postgres_stop()
    time.sleep(DOWN_SECONDS)
    services.postgres_start()
    back = time.monotonic()

    job = wait_until_finished(job_id, since=back)
    assert job.state == "succeeded", job.errors
    assert_one_set_of_results(client, run["id"], job_id)
    assert not ScoringChunk.objects.filter(job_id=job_id).exists()


def assert_one_set_of_results(client, run_id: int, job_id: int) -> None:
    scoring = Scoring.objects.get(run_id=run_id)
    assert scoring.job_id == job_id
    rows = ComparisonRow.objects.filter(run_id=run_id)
    assert rows.count() == len(set(rows.values_list("document_id", "position"))) == 14
    values = MetricValue.objects.filter(run_id=run_id)
    assert values.count() == len(set(values.values_list("scope", "scope_key", "name"))) > 0
    assert client.get(f"/api/v1/runs/{run_id}/").json()["status"] == "scored"
