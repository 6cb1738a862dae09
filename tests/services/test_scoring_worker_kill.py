"""A worker killed in the middle of a scoring (SIGKILL, a real process) leaves a job that another worker
finishes exactly once: one Scoring, no duplicate rows."""

from __future__ import annotations

import signal
import time

import pytest
from django.conf import settings

from annotations.models import Job
from evalproject.celery import app as celery_app
from metrics.models import ComparisonRow, MetricValue, Scoring
from tests.api.runs_support import SPANS, create_run, load_span_gold, post_documents, read_jsonl
from tests.conftest import start_celery_worker, stop_celery_worker, token_client

# Short enough for the test to finish in well under a minute: the second worker restores the
# unacknowledged message once it is older than this (kombu checks every 10 s).
VISIBILITY_TIMEOUT_SECONDS = 2
SECONDS_PER_DOCUMENT = 1.5


# The doomed worker scores slowly, one document a chunk, so it can be killed part-way through.
WORKER_ENVIRONMENT = {
    "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT_SECONDS),
    "EVALPROJECT_TEST_SCORING_DELAY": str(SECONDS_PER_DOCUMENT),
    "SCORING_CHUNK_DOCUMENTS": "1",
}


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
def test_a_scoring_interrupted_by_sigkill_is_finished_once_by_another_worker(project, alice):
    if not settings.CELERY_BROKER_URL:
        pytest.fail("CELERY_BROKER_URL is not set: run the suite through scripts/test")
    celery_app.control.purge()
    load_span_gold(project)
    client = token_client(alice)
    run = create_run(client, kind="spans")
    assert post_documents(client, run["id"], read_jsonl(SPANS / "spans_predictions.jsonl")).status_code == 201

    first = start_celery_worker("doomed", extra_env=WORKER_ENVIRONMENT)
    second = None
    try:
        job_id = client.post(f"/api/v1/runs/{run['id']}/finalize/").json()["job"]["id"]
        _wait_for(
            lambda: Job.objects.filter(pk=job_id, state="running", progress_done__gte=1).exists(),
            30,
            "the first worker to be part-way through the scoring",
        )
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        assert Job.objects.get(pk=job_id).state == "running"
        assert not Scoring.objects.filter(run_id=run["id"]).exists()

        second = start_celery_worker("rescuer", extra_env=WORKER_ENVIRONMENT)
        job = _wait_for(
            lambda: Job.objects.filter(pk=job_id, state="succeeded").first(),
            50,
            "the second worker to finish the job",
        )
    finally:
        for process in (first, second):
            if process is not None:
                stop_celery_worker(process)

    assert job.attempts >= 2
    scoring = Scoring.objects.get(run_id=run["id"])
    assert scoring.job_id == job_id
    rows = ComparisonRow.objects.filter(run_id=run["id"])
    assert rows.count() == len(set(rows.values_list("document_id", "position"))) == 14
    values = MetricValue.objects.filter(run_id=run["id"])
    assert values.count() == len(set(values.values_list("scope", "scope_key", "name")))
    assert client.get(f"/api/v1/runs/{run['id']}/").json()["status"] == "scored"
