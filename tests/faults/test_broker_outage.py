"""Redis down when a job is asked for: the API answers 202 with the queued job (never 500), and once
Redis is back a worker's dispatcher sends it; it ends with exactly one set of rows."""

from __future__ import annotations

import time

import pytest

from annotations.models import GoldVersion, Job
from tests.api.runs_support import SPANS, create_run, load_span_gold, post_documents, read_jsonl
from tests.conftest import token_client
from tests.faults.conftest import wait_until_finished
from tests.faults.test_database_restart import assert_one_set_of_results
from tests.services.test_gold_import_fixtures import letters_jsonl, upload

pytestmark = [pytest.mark.faults, pytest.mark.worker]

DOWN_SECONDS = 3
# The API does not wait for a broker that is down (a send fails within a second); a slow machine's margin.
ANSWER_SECONDS = 5


def test_a_finalize_while_redis_is_down_answers_202_and_is_scored_once_redis_is_back(
    project, alice, services, workers
):
    load_span_gold(project)
    client = token_client(alice)
    run = create_run(client, kind="spans")
    assert post_documents(client, run["id"], read_jsonl(SPANS / "spans_predictions.jsonl")).status_code == 201
    workers("scorer")

    services.redis_stop()
    asked = time.monotonic()
    response = client.post(f"/api/v1/runs/{run['id']}/finalize/")
    answered_in = time.monotonic() - asked
    time.sleep(DOWN_SECONDS)
    services.redis_start()
    back = time.monotonic()

    assert response.status_code == 202, response.content
    assert answered_in < ANSWER_SECONDS
    job_id = response.json()["job"]["id"]
    job = wait_until_finished(job_id, since=back)
    assert job.state == "succeeded", job.errors
    assert_one_set_of_results(client, run["id"], job_id)


def test_an_import_while_redis_is_down_answers_202_and_runs_once_redis_is_back(
    project, alice, services, workers
):
    client = token_client(alice)
    workers("importer")

    services.redis_stop()
    asked = time.monotonic()
    response = client.post(
        "/api/v1/projects/letters/imports/",
        {"file": upload("letters.jsonl", letters_jsonl())},
        format="multipart",
    )
    answered_in = time.monotonic() - asked
    time.sleep(DOWN_SECONDS)
    services.redis_start()
    back = time.monotonic()

    assert response.status_code == 202, response.content
    assert answered_in < ANSWER_SECONDS
    assert Job.objects.get(pk=response.json()["id"]).state in ("queued", "running", "succeeded")
    job = wait_until_finished(response.json()["id"], since=back)
    assert job.state == "succeeded", job.errors
    assert GoldVersion.objects.filter(project=project).count() == 1
