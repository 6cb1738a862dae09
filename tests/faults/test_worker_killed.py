"""A worker killed (SIGKILL) in the middle of a job, and a worker started again with the default
settings (the broker's visibility timeout stays 3,600 s): the dispatcher sees the silent job, queues it
again (or, for a scoring fanned out over the workers, sends its lost chunk again), and it ends with
exactly one set of rows."""

from __future__ import annotations

import signal
import time

import pytest

from annotations.models import GoldVersion, Job
from annotations.services import import_job_create
from metrics.models import MetricValue, Scoring, ScoringChunk
from tests.api.runs_support import SPANS, create_run, load_span_gold, post_documents, read_jsonl
from tests.conftest import token_client
from tests.faults.conftest import wait_for, wait_until_finished
from tests.faults.test_database_restart import assert_one_set_of_results
from tests.services.span_workers_support import scoring_of_one_process
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


def test_a_chunk_lost_with_its_killed_worker_is_scored_again_alone_and_the_others_once(
    project, alice, workers, tmp_path
):
    """A scoring (a chord of chunk tasks), with the broker's default visibility timeout: a worker killed in the middle of a chunk leaves that chunk pending. The dispatcher keeps the job's
    claim and the stored chunks, and sends the pending chunks again; each chunk is scored once, and the
    result is the one of one process."""
    client, run = _span_run(project, alice)
    scored = tmp_path / "scored-chunks.log"
    doomed = workers(
        "doomed-chunks",
        EVALPROJECT_TEST_SCORING_DELAY="1.5",
        EVALPROJECT_TEST_CHUNK_LOG=str(scored),
        SCORING_CHUNK_DOCUMENTS="1",
    )
    job_id = client.post(f"/api/v1/runs/{run['id']}/finalize/").json()["job"]["id"]
    chunks = ScoringChunk.objects.filter(job_id=job_id)
    wait_for(lambda: chunks.filter(partial__isnull=False).exists(), 30, "a first chunk to be stored")
    claim = Job.objects.get(pk=job_id).claim_token

    _kill(doomed)
    stored_before = set(chunks.filter(partial__isnull=False).values_list("index", flat=True))
    assert 0 < len(stored_before) < chunks.count()
    workers("rescuer-chunks", EVALPROJECT_TEST_CHUNK_LOG=str(scored))
    back = time.monotonic()

    job = wait_until_finished(job_id, since=back)
    assert job.state == "succeeded", job.errors
    assert (job.claim_token, job.attempts) == (claim, 2)  # resumed, not claimed again
    scoring = Scoring.objects.get(run_id=run["id"])
    indexes = [int(line) for line in scored.read_text().split()]
    assert sorted(indexes) == list(range(len(scoring.document_ids)))  # every chunk scored once
    assert job.progress_done == job.progress_total == len(scoring.document_ids)
    assert_one_set_of_results(client, run["id"], job_id)
    assert not chunks.exists()
    one = scoring_of_one_process(run["id"], job)
    assert scoring.report == one.report
    assert list(
        MetricValue.objects.filter(scoring=scoring)
        .order_by("pk")
        .values_list("scope", "scope_key", "name", "value")
    ) == [(value.scope, value.scope_key, value.name, value.value) for value in one.metric_values]


def _span_run(project, user) -> tuple:
    load_span_gold(project)
    client = token_client(user)
    run = create_run(client, kind="spans")
    assert post_documents(client, run["id"], read_jsonl(SPANS / "spans_predictions.jsonl")).status_code == 201
    return client, run
