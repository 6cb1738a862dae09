"""A worker killed in the middle of a chunk task (SIGKILL, a real process) loses that chunk only: the
task is delivered again to the other worker, which stores it once more in the same row, and the
chord finishes with the scoring one process computes; progress counts each chunk once."""

from __future__ import annotations

import signal
import time

import pytest
from django.conf import settings

from annotations.models import GoldVersion, Job
from evalproject.celery import app as celery_app
from experiments.models import ExperimentRun
from metrics.models import MetricValue, Scoring, ScoringChunk
from metrics.services.span_scoring import score_span_run
from tests.api.runs_support import SPANS, create_run, load_span_gold, post_documents, read_jsonl
from tests.conftest import start_celery_worker, stop_celery_worker, token_client

VISIBILITY_TIMEOUT_SECONDS = 2
COMMON_ENVIRONMENT = {
    "SCORING_EXECUTOR": "celery",
    "SCORING_CHUNK_DOCUMENTS": "1",
    "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT_SECONDS),
}
# The doomed worker holds each chunk task for a while after storing its partial result.
DOOMED_ENVIRONMENT = {**COMMON_ENVIRONMENT, "EVALPROJECT_TEST_SCORING_DELAY": "3"}


def _wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_chunk_task_lost_with_its_worker_is_scored_again_alone(project, alice):
    if not settings.CELERY_BROKER_URL:
        pytest.fail("CELERY_BROKER_URL is not set: run the suite through scripts/test")
    celery_app.control.purge()
    load_span_gold(project)
    client = token_client(alice)
    run = create_run(client, kind="spans")
    assert post_documents(client, run["id"], read_jsonl(SPANS / "spans_predictions.jsonl")).status_code == 201

    doomed = start_celery_worker("doomed-chunks", extra_env=DOOMED_ENVIRONMENT)
    rescuer = None
    try:
        job_id = client.post(f"/api/v1/runs/{run['id']}/finalize/").json()["job"]["id"]
        _wait_for(
            lambda: ScoringChunk.objects.filter(job_id=job_id).exists(),
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
        job = _wait_for(
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
    one = score_span_run(
        run=ExperimentRun.objects.select_related("project").get(pk=run["id"]),
        gold_version=GoldVersion.objects.get(pk=job.params["gold_version_id"]),
        document_ids=None,
        chunk_size=500,
        progress=lambda done, total: None,
    )
    assert scoring.report == one.report
    assert list(MetricValue.objects.filter(scoring=scoring).order_by("pk").values_list("name", "value")) == [
        (value.name, value.value) for value in one.metric_values
    ]
