"""A worker killed (SIGKILL) in the middle of a job, and a worker started again with the default
settings (the broker's visibility timeout stays 3,600 s): the dispatcher sees the silent job, queues it
again, and it ends with exactly one set of rows."""

from __future__ import annotations

import signal
import time

import pytest

from annotations.models import GoldVersion, Job
from annotations.services import import_job_create
from metrics.models import Scoring
from tests.api.runs_support import SPANS, create_run, load_span_gold, post_documents, read_jsonl
from tests.conftest import token_client
from tests.faults.conftest import wait_for, wait_until_finished
from tests.faults.test_database_restart import assert_one_set_of_results
from tests.services.test_gold_import_fixtures import letters_jsonl, upload

pytestmark = [pytest.mark.faults, pytest.mark.worker]


def _kill(process) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


def test_an_import_whose_worker_was_killed_is_run_again_by_the_next_worker(project, alice, workers):
    doomed = workers("doomed-importer", EVALPROJECT_TEST_IMPORT_DELAY="30")
    job = import_job_create(project=project, user=alice, upload=upload("letters.jsonl", letters_jsonl()))
    wait_for(lambda: Job.objects.filter(pk=job.pk, state="running").exists(), 30, "the import to start")

    _kill(doomed)
    assert Job.objects.get(pk=job.pk).state == "running"
    workers("rescuer")
    back = time.monotonic()

    job = wait_until_finished(job.pk, since=back)
    assert job.state == "succeeded", job.errors
    assert job.attempts == 2
    assert GoldVersion.objects.filter(project=project).count() == 1


def test_a_scoring_whose_worker_was_killed_is_finished_once_by_the_next_worker(project, alice, workers):
    load_span_gold(project)
    client = token_client(alice)
    run = create_run(client, kind="spans")
    assert post_documents(client, run["id"], read_jsonl(SPANS / "spans_predictions.jsonl")).status_code == 201
    doomed = workers("doomed-scorer", EVALPROJECT_TEST_SCORING_DELAY="1.5", SCORING_CHUNK_DOCUMENTS="1")
    job_id = client.post(f"/api/v1/runs/{run['id']}/finalize/").json()["job"]["id"]
    wait_for(
        lambda: Job.objects.filter(pk=job_id, state="running", progress_done__gte=1).exists(),
        30,
        "the scoring to be part-way through",
    )

    _kill(doomed)
    assert not Scoring.objects.filter(run_id=run["id"]).exists()
    workers("rescuer")
    back = time.monotonic()

    job = wait_until_finished(job_id, since=back)
    assert job.state == "succeeded", job.errors
    assert job.attempts == 2
    assert_one_set_of_results(client, run["id"], job_id)
