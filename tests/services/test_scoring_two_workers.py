"""One span run scored by two real Celery workers (a chunk task per document)
stores the scoring one process computes: the same report, metric values and comparison rows."""

from __future__ import annotations

import pytest

from annotations.models import Job
from evalproject.celery import app as celery_app
from metrics.models import ComparisonRow, MetricValue, Scoring
from tests.conftest import start_celery_worker, stop_celery_worker
from tests.services.span_workers_support import scoring_of_one_process, span_run_with_predictions, wait_for

WORKER_ENVIRONMENT = {"SCORING_CHUNK_DOCUMENTS": "1"}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_two_workers_store_the_scoring_of_one_process(project, alice):
    client, run = span_run_with_predictions(project, alice)

    workers = [start_celery_worker(name, extra_env=WORKER_ENVIRONMENT) for name in ("left", "right")]
    try:
        job_id = client.post(f"/api/v1/runs/{run['id']}/finalize/").json()["job"]["id"]
        job = wait_for(
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

    one = scoring_of_one_process(run["id"], job)
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
        .order_by("id")  # the order readers page in (the comparison API, its CSV)
        .values_list("document__external_id", "match_status", "columns")
    )
    assert stored_rows == [(row.document_id, row.match_status, row.columns) for row in one.rows]
