"""Shared by the tests that score a span run with real Celery workers: a span run with its predictions
posted, waiting on the workers, and the scoring one process computes for the same run."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from annotations.models import GoldVersion, Job, Project
from evalproject.celery import app as celery_app
from experiments.models import ExperimentRun
from metrics.services.results import ScoringResult
from metrics.services.scoring import scoring_partials, scoring_plan
from tests.api.runs_support import SPANS, create_run, load_span_gold, post_documents, read_jsonl
from tests.conftest import token_client


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def span_run_with_predictions(project: Project, user) -> tuple[APIClient, dict]:
    """A span run of `project` with the test predictions posted, on a purged broker, and the client of
    `user` that created it."""
    if not settings.CELERY_BROKER_URL:
        pytest.fail("CELERY_BROKER_URL is not set: run the suite through scripts/test")
    celery_app.control.purge()
    load_span_gold(project)
    client = token_client(user)
    run = create_run(client, kind="spans")
    assert post_documents(client, run["id"], read_jsonl(SPANS / "spans_predictions.jsonl")).status_code == 201
    return client, run


def scoring_of_one_process(run_id: int, job: Job) -> ScoringResult:
    """The scoring of the run against the gold version of `job`, computed here in one process: the
    plan's chunks scored one after the other and merged, with nothing stored in between."""
    run = ExperimentRun.objects.select_related("project").get(pk=run_id)
    gold_version = GoldVersion.objects.get(pk=job.params["gold_version_id"])
    plan = scoring_plan(run=run, gold_version=gold_version)
    partials = scoring_partials(plan, run=run, gold_version=gold_version)
    return plan.result(run=run, gold_version=gold_version, partials=partials)
