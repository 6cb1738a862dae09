"""One span run scored by two real Celery workers (SCORING_EXECUTOR=celery, a chunk task per document)
stores the scoring one process computes: the same report, metric values and comparison rows."""

from __future__ import annotations

import time

import pytest
from django.conf import settings

from annotations.models import GoldVersion, Job
from evalproject.celery import app as celery_app
from experiments.models import ExperimentRun
from metrics.models import ComparisonRow, MetricValue, Scoring
from metrics.services.span_scoring import score_span_run
from tests.api.runs_support import SPANS, create_run, load_span_gold, post_documents, read_jsonl
from tests.conftest import start_celery_worker, stop_celery_worker, token_client

WORKER_ENVIRONMENT = {"SCORING_EXECUTOR": "celery", "SCORING_CHUNK_DOCUMENTS": "1"}


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
def test_two_workers_store_the_scoring_of_one_process(project, alice):
    if not settings.CELERY_BROKER_URL:
        pytest.fail("CELERY_BROKER_URL is not set: run the suite through scripts/test")
    celery_app.control.purge()
    load_span_gold(project)
    client = token_client(alice)
    run = create_run(client, kind="spans")
    assert post_documents(client, run["id"], read_jsonl(SPANS / "spans_predictions.jsonl")).status_code == 201

    workers = [start_celery_worker(name, extra_env=WORKER_ENVIRONMENT) for name in ("left", "right")]
    try:
        job_id = client.post(f"/api/v1/runs/{run['id']}/finalize/").json()["job"]["id"]
        job = _wait_for(
            lambda: Job.objects.filter(pk=job_id, state__in=["succeeded", "failed"]).first(),
            60,
            "the workers to finish the job",
        )
        assert job.state == "succeeded", job.errors
        chunk_tasks = {
            host: stats["total"].get("metrics.score_chunk", 0)
            for host, stats in (celery_app.control.inspect(timeout=2).stats() or {}).items()
        }
    finally:
        for process in workers:
            stop_celery_worker(process)

    scoring = Scoring.objects.get(run_id=run["id"])
    assert job.progress_done == job.progress_total == len(scoring.document_ids) > 1
    assert sum(chunk_tasks.values()) == len(scoring.document_ids)  # one chunk task per document
    assert len(chunk_tasks) == 2 and all(chunk_tasks.values()), chunk_tasks  # both workers scored

    one = score_span_run(
        run=ExperimentRun.objects.select_related("project").get(pk=run["id"]),
        gold_version=GoldVersion.objects.get(pk=job.params["gold_version_id"]),
        document_ids=None,
        chunk_size=500,
        progress=lambda done, total: None,
    )
    assert scoring.report == one.report
    assert scoring.document_ids == one.document_ids
    stored_values = list(
        MetricValue.objects.filter(scoring=scoring)
        .order_by("pk")
        .values_list("scope", "scope_key", "name", "value", "n", "ci_low", "ci_high")
    )
    assert stored_values == [
        (value.scope, value.scope_key, value.name, value.value, value.n, value.ci_low, value.ci_high)
        for value in one.metric_values
    ]
    stored_rows = list(
        ComparisonRow.objects.filter(scoring=scoring)
        .order_by("position")
        .values_list("document__external_id", "match_status", "columns")
    )
    assert stored_rows == [(row.document_id, row.match_status, row.columns) for row in one.rows]
