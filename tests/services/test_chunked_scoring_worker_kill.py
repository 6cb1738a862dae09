"""A worker killed in the middle of a chunk task (SIGKILL, a real process) loses that chunk only: once
the broker's visibility timeout (shortened here) has passed, the task is delivered again to the other
worker, which stores it in its row, and the chord finishes with the scoring one process computes;
progress counts each chunk once. (With the default timeout the dispatcher sends the lost chunk
again: tests/faults/test_worker_killed.py.)"""

from __future__ import annotations

import signal
import time

import pytest

from annotations.models import Job
from metrics.models import MetricValue, Scoring, ScoringChunk
from tests.conftest import start_celery_worker, stop_celery_worker
from tests.services.span_workers_support import scoring_of_one_process, span_run_with_predictions, wait_for

VISIBILITY_TIMEOUT_SECONDS = 2
COMMON_ENVIRONMENT = {
    "SCORING_CHUNK_DOCUMENTS": "1",
    "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT_SECONDS),
}
# The doomed worker holds each chunk task for a while before it scores the chunk.
DOOMED_ENVIRONMENT = {**COMMON_ENVIRONMENT, "EVALPROJECT_TEST_SCORING_DELAY": "3"}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_chunk_task_lost_with_its_worker_is_scored_again_alone(project, alice):
    client, run = span_run_with_predictions(project, alice)

    doomed = start_celery_worker("doomed-chunks", extra_env=DOOMED_ENVIRONMENT)
    rescuer = None
    try:
        job_id = client.post(f"/api/v1/runs/{run['id']}/finalize/").json()["job"]["id"]
        wait_for(
            lambda: ScoringChunk.objects.filter(job_id=job_id, partial__isnull=False).exists(),
            30,
            "the doomed worker to store its first chunk",
        )
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(timeout=10)
        assert Job.objects.get(pk=job_id).state == "running"
        # A worker delivers again the messages left unacknowledged past the visibility timeout when it
        # starts, then only every 100 s: the rescuer starts once the lost chunk's message is overdue.
        time.sleep(VISIBILITY_TIMEOUT_SECONDS + 1)

        rescuer = start_celery_worker("rescuer-chunks", extra_env=COMMON_ENVIRONMENT)
        job = wait_for(
            lambda: Job.objects.filter(pk=job_id, state__in=["succeeded", "failed"]).first(),
            60,
            "the rescuer to finish the job",
        )
    finally:
        for process in (doomed, rescuer):
            if process is not None:
                stop_celery_worker(process)

    assert job.state == "succeeded", job.errors
    scoring = Scoring.objects.get(run_id=run["id"])
    assert job.progress_done == job.progress_total == len(scoring.document_ids)
    assert not ScoringChunk.objects.filter(job_id=job_id).exists()
    one = scoring_of_one_process(run["id"], job)
    assert scoring.report == one.report
    assert list(MetricValue.objects.filter(scoring=scoring).order_by("pk").values_list("name", "value")) == [
        (value.name, value.value) for value in one.metric_values
    ]
