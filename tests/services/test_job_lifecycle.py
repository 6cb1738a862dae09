"""The life of a job (annotations.services.jobs): sent after commit even when the broker is down,
claimed once, finished once with `job_finished`, retried after database errors, never a traceback."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerDown

from annotations.models import Job, JobState
from annotations.services.jobs import job_claim, job_finish, jobs_dispatch
from annotations.signals import job_finished
from evalproject.celery import app as celery_app
from experiments.models import ExperimentRun, RunDocument
from metrics.models import ComparisonRow, Scoring
from metrics.tasks import score_run
from tests.api.runs_support import (
    finalize,
    posted_extraction_run,
)
from tests.services.test_gold_import_fixtures import letters_jsonl, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def posted_run(project, alice_client) -> dict:
    return posted_extraction_run(project, alice_client)


@pytest.fixture
def broker_down(monkeypatch):
    """Tasks go to a broker (not in-process), and every send fails as kombu fails on a dead Redis."""

    def refuse(*args, **kwargs):
        raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    celery_app.conf.task_always_eager = False  # the conftest's autouse fixture restores it
    monkeypatch.setattr(score_run, "delay", refuse)
    from annotations.tasks import import_job_run_task

    monkeypatch.setattr(import_job_run_task, "delay", refuse)


def test_finalize_answers_202_with_a_queued_job_when_the_broker_is_down(
    posted_run, alice_client, broker_down, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(f"/api/v1/runs/{posted_run['id']}/finalize/")

    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert (job.state, job.enqueued_at) == (JobState.QUEUED, None)


def test_an_import_answers_202_with_a_queued_job_when_the_broker_is_down(
    project, alice_client, broker_down, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(
            "/api/v1/projects/letters/imports/",
            {"file": upload("letters.jsonl", letters_jsonl())},
            format="multipart",
        )

    assert response.status_code == 202
    assert Job.objects.get(pk=response.json()["id"]).state == JobState.QUEUED


def test_the_dispatcher_sends_a_job_whose_message_was_never_sent(
    posted_run, alice_client, broker_down, monkeypatch, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job_id = alice_client.post(f"/api/v1/runs/{posted_run['id']}/finalize/").json()["job"]["id"]
    monkeypatch.undo()  # the broker is back (and runs tasks in-process here)
    celery_app.conf.task_always_eager = True

    assert jobs_dispatch().sent == 0  # too young: its own send may still be on its way
    later = timezone.now() + timedelta(seconds=settings.JOB_DISPATCH_SECONDS + 1)
    assert jobs_dispatch(now=later).sent == 1

    assert Job.objects.get(pk=job_id).state == JobState.SUCCEEDED
    assert Scoring.objects.filter(run_id=posted_run["id"]).count() == 1


def test_the_dispatcher_fails_a_job_whose_worker_died_too_often_and_its_run_with_it(
    posted_run, alice_client, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        job_id = finalize(alice_client, posted_run["id"])["job"]["id"]
    silent_since = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    Job.objects.filter(pk=job_id).update(
        state=JobState.RUNNING,
        attempts=settings.JOB_MAX_ATTEMPTS,
        claim_token="dead",
        heartbeat_at=silent_since,
    )

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert jobs_dispatch().failed == 1

    job = Job.objects.get(pk=job_id)
    assert job.state == JobState.FAILED
    assert f"stopped {settings.JOB_MAX_ATTEMPTS} times" in job.errors[0]["message"]
    assert ExperimentRun.objects.get(pk=posted_run["id"]).status == "failed"
    assert len(callbacks) == 1


def test_a_job_finishes_once_and_only_for_its_current_claim(project):
    job = Job.objects.create(kind="import", project=project)
    claimed = job_claim(job_id=job.pk, kind="import")
    assert job_claim(job_id=job.pk, kind="import") is None  # a second delivery does nothing
    received = []
    job_finished.connect(lambda sender, job, **_: received.append(job.state), weak=False, dispatch_uid="t")
    try:
        assert not job_finish(job_id=job.pk, state=JobState.SUCCEEDED, claim_token="someone-else")
        assert job_finish(job_id=job.pk, state=JobState.SUCCEEDED, claim_token=claimed.claim_token)
        assert not job_finish(job_id=job.pk, state=JobState.FAILED, claim_token=claimed.claim_token)
    finally:
        job_finished.disconnect(dispatch_uid="t")

    # The test's transaction never commits: `job_finished` waits for a commit that does not come.
    assert received == []
    assert Job.objects.get(pk=job.pk).state == JobState.SUCCEEDED


def test_job_finished_is_sent_after_the_commit_of_a_scoring(
    posted_run, alice_client, django_capture_on_commit_callbacks
):
    received = []
    job_finished.connect(
        lambda sender, job, **_: received.append((job.kind, job.state)), weak=False, dispatch_uid="t"
    )
    try:
        with django_capture_on_commit_callbacks(execute=True):
            finalize(alice_client, posted_run["id"])
        # The scoring ran in one of the callbacks; its own on-commit signal runs too.
    finally:
        job_finished.disconnect(dispatch_uid="t")

    assert received == [("scoring", "succeeded")]


def test_a_database_error_during_a_scoring_is_retried_and_stores_one_set_of_rows(
    posted_run, alice_client, monkeypatch, django_capture_on_commit_callbacks
):
    from metrics.services import chunked_scoring

    real_store = chunked_scoring.scoring_store
    calls = []

    def store_once_unreachable(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("terminating connection due to administrator command")
        return real_store(**kwargs)

    monkeypatch.setattr(chunked_scoring, "scoring_store", store_once_unreachable)
    with django_capture_on_commit_callbacks(execute=True):
        job_id = finalize(alice_client, posted_run["id"])["job"]["id"]

    job = Job.objects.get(pk=job_id)
    assert (job.state, job.attempts, len(calls)) == (JobState.SUCCEEDED, 1, 2)
    assert Scoring.objects.filter(run_id=posted_run["id"]).count() == 1
    assert ComparisonRow.objects.filter(run_id=posted_run["id"]).count() == 12


def test_a_database_error_that_lasts_fails_the_job_with_a_clear_error(
    posted_run, alice_client, monkeypatch, settings, django_capture_on_commit_callbacks
):
    from metrics.services import chunked_scoring

    settings.JOB_DATABASE_RETRIES = 2

    def unreachable(**kwargs):
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(chunked_scoring, "scoring_store", unreachable)
    with django_capture_on_commit_callbacks(execute=True):
        job_id = finalize(alice_client, posted_run["id"])["job"]["id"]

    job = Job.objects.get(pk=job_id)
    assert job.state == JobState.FAILED
    assert job.errors[0]["message"].startswith("the database could not be reached after 2 retries")
    assert alice_client.get(f"/api/v1/runs/{posted_run['id']}/").json()["status"] == "failed"


def test_an_unexpected_error_is_logged_with_its_traceback_and_served_as_an_error_id(
    posted_run, alice_client, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    from metrics.services import chunked_scoring

    def broken(**kwargs):
        raise RuntimeError("a bug deep inside")

    monkeypatch.setattr(chunked_scoring, "scoring_store", broken)
    with caplog.at_level(logging.ERROR), django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, posted_run["id"])

    served = alice_client.get(f"/api/v1/runs/{posted_run['id']}/").json()["progress"]
    message = served["errors"][0]["message"]
    error_id = message.split()[2].rstrip(";")
    assert message == f"internal error {error_id}; see the worker log"
    assert "Traceback" not in str(served) and "RuntimeError" not in str(served)
    logged = next(record for record in caplog.records if error_id in record.getMessage())
    assert logged.exc_info[0] is RuntimeError


def test_costs_that_add_up_past_the_largest_float_leave_the_total_empty_with_a_warning(
    posted_run, alice_client, django_capture_on_commit_callbacks
):
    RunDocument.objects.filter(run_id=posted_run["id"]).update(cost_usd=1.7e308)
    with django_capture_on_commit_callbacks(execute=True):
        job_id = finalize(alice_client, posted_run["id"])["job"]["id"]

    job = alice_client.get(f"/api/v1/jobs/{job_id}/").json()
    assert job["status"] == "succeeded", job["errors"]
    assert any(w["field"] == "cost_usd" and "largest number" in w["message"] for w in job["warnings"])
    assert alice_client.get(f"/api/v1/runs/{posted_run['id']}/").json()["totals"]["cost_usd"] is None


def test_two_dispatchers_send_a_lost_job_once(
    posted_run, alice_client, broker_down, monkeypatch, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job_id = alice_client.post(f"/api/v1/runs/{posted_run['id']}/finalize/").json()["job"]["id"]
    sent = []
    monkeypatch.setattr(score_run, "delay", lambda job_id: sent.append(job_id))
    later = timezone.now() + timedelta(seconds=settings.JOB_DISPATCH_SECONDS + 1)

    first, second = jobs_dispatch(now=later), jobs_dispatch(now=later)

    assert (first.sent, second.sent, sent) == (1, 0, [job_id])


def test_an_import_whose_worker_was_given_up_for_dead_writes_no_gold(project, alice, settings, tmp_path):
    """Its job was queued again and claimed by another worker while it read: its write rolls back."""
    from annotations.models import GoldVersion
    from annotations.services import import_job_run

    settings.MEDIA_ROOT = tmp_path
    job = Job(kind="import", project=project, created_by=alice, params={"file_name": "letters.jsonl"})
    job.input_file.save("slow/letters.jsonl", upload("letters.jsonl", letters_jsonl()), save=False)
    job.save()

    def taken_over_meanwhile():
        Job.objects.filter(pk=job.pk).update(claim_token="the-next-worker")

    assert import_job_run(job_id=job.pk, after_read=taken_over_meanwhile) == "skipped"
    assert not GoldVersion.objects.filter(project=project).exists()
    assert Job.objects.get(pk=job.pk).state == JobState.RUNNING  # the next worker's to finish


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_the_dispatcher_leaves_alone_a_silent_job_whose_row_its_worker_holds(project, settings):
    """A scoring writing its results holds its job row locked for a while, and its heartbeat waits on
    that lock: the worker is alive, and the job is not queued again (PostgreSQL)."""
    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (row locks): run the suite through scripts/test")
    silent_since = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    job = Job.objects.create(
        kind="scoring",
        project=project,
        state=JobState.RUNNING,
        claim_token="alive",
        heartbeat_at=silent_since,
    )
    locked, release = threading.Event(), threading.Event()

    def write_results() -> None:
        try:
            with transaction.atomic():
                Job.objects.select_for_update().get(pk=job.pk)
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    writer = threading.Thread(target=write_results)
    writer.start()
    try:
        assert locked.wait(30)
        assert jobs_dispatch().requeued == 0
    finally:
        release.set()
        writer.join()
    assert jobs_dispatch().requeued == 1  # once the lock is gone, a silent job is queued again


def test_the_dispatcher_sends_again_a_queued_job_whose_message_was_lost(
    posted_run, alice_client, settings, django_capture_on_commit_callbacks
):
    """Redis restarted without persistence: the job was sent, then its message vanished."""
    with django_capture_on_commit_callbacks(execute=False):
        job_id = finalize(alice_client, posted_run["id"])["job"]["id"]
    sent_at = timezone.now()
    Job.objects.filter(pk=job_id).update(enqueued_at=sent_at)

    assert jobs_dispatch(now=sent_at + timedelta(seconds=settings.JOB_REQUEUE_SECONDS - 1)).sent == 0
    assert jobs_dispatch(now=sent_at + timedelta(seconds=settings.JOB_REQUEUE_SECONDS + 1)).sent == 1

    assert Job.objects.get(pk=job_id).state == JobState.SUCCEEDED
