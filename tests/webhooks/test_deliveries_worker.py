"""Deliveries through a real Celery worker and Redis: the worker that finishes a job queues the event,
a worker delivers it, and a failed attempt comes back after its backoff."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from evalproject_client import verify_webhook

from annotations.models import JobState
from tests.services.test_gold_import_fixtures import letters_jsonl
from tests.services.test_gold_import_worker import import_and_wait
from tests.webhooks.receiver import running_receiver
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_create

pytestmark = pytest.mark.worker


@pytest.fixture
def worker_settings(monkeypatch, settings, tmp_path):
    """The worker is another process: it reads uploads where this one saves them, and retries after 1 s."""
    monkeypatch.setenv("MEDIA_ROOT", str(tmp_path / "media"))
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setenv("WEBHOOK_RETRY_SECONDS", "1")


@pytest.fixture
def worker(worker_settings, celery_worker_process):
    return celery_worker_process


def wait_for_attempts(webhook, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while WebhookDelivery.objects.filter(webhook=webhook).count() < count and time.monotonic() < deadline:
        time.sleep(0.1)


def test_a_job_finished_on_a_worker_is_delivered_signed_after_a_failed_attempt(worker, project, alice):
    with running_receiver(500, 200) as receiver:
        webhook = webhook_create(project=project, user=alice, url=receiver.url)
        job = import_and_wait(project, alice, "letters.jsonl", letters_jsonl())
        wait_for_attempts(webhook, 2)

    assert job.state == JobState.SUCCEEDED
    assert len(receiver.requests) == 2
    event = verify_webhook(receiver.requests[1].body, receiver.requests[1].headers, webhook.secret)
    assert (event["event"], event["job"], event["project"]) == ("job.succeeded", job.pk, "letters")
    attempts = WebhookDelivery.objects.filter(webhook=webhook).order_by("attempt")
    assert [(row.attempt, row.status_code, row.succeeded) for row in attempts] == [
        (1, 500, False),
        (2, 200, True),
    ]
    assert attempts[1].created_at - attempts[0].created_at >= timedelta(seconds=1)  # the backoff
