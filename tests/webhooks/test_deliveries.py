"""Deliveries: when a job ends, a receiver on 127.0.0.1 gets the event, signed; a failing receiver is
retried with exponential backoff and every attempt is logged."""

from __future__ import annotations

import json
import socket

import pytest
from evalproject_client import verify_webhook

from annotations.models import Job, JobState
from experiments.models import ExperimentRun
from tests.api.runs_support import EXTRACTION, create_run, load_extraction_gold, post_documents, read_jsonl
from tests.services.test_gold_import_fixtures import (
    letters_jsonl,
    media_root,  # noqa: F401 (a fixture)
    upload,
)
from tests.webhooks.receiver import running_receiver
from webhooks.models import WebhookDelivery
from webhooks.tasks import webhook_deliver_task

pytestmark = pytest.mark.usefixtures("media_root")
WEBHOOKS = "/api/v1/projects/letters/webhooks/"


def register(client, url: str) -> dict:
    response = client.post(WEBHOOKS, {"url": url}, format="json")
    assert response.status_code == 201, response.data
    return response.data


def import_letters(client, content: bytes | None = None) -> int:
    response = client.post(
        "/api/v1/projects/letters/imports/",
        {"file": upload("letters.jsonl", content or letters_jsonl())},
        format="multipart",
    )
    assert response.status_code == 202, response.data
    return response.data["id"]


def deliveries(client, webhook_id: int) -> list[dict]:
    return client.get(f"{WEBHOOKS}{webhook_id}/deliveries/").json()["results"]


def test_a_finished_import_reaches_the_receiver_with_a_valid_signature(
    project, alice_client, django_capture_on_commit_callbacks
):
    with running_receiver() as receiver:
        webhook = register(alice_client, receiver.url)
        with django_capture_on_commit_callbacks(execute=True):
            job_id = import_letters(alice_client)

    assert len(receiver.requests) == 1
    request = receiver.requests[0]
    event = verify_webhook(request.body, request.headers, webhook["secret"])
    assert {key: value for key, value in event.items() if key != "timestamp"} == {
        "event": "job.succeeded",
        "project": "letters",
        "run": None,
        "job": job_id,
        "kind": "import",
        "status": "succeeded",
        "url": f"/api/v1/jobs/{job_id}/",
    }
    assert request.headers["X-Evalproject-Timestamp"] == str(event["timestamp"])
    assert request.headers["Content-Type"] == "application/json"
    assert request.path == "/hooks/evalproject"
    [logged] = deliveries(alice_client, webhook["id"])
    assert (logged["event"], logged["attempt"], logged["status_code"], logged["succeeded"]) == (
        "job.succeeded",
        1,
        200,
        True,
    )
    assert logged["job"] == job_id and logged["payload"] == event


def test_another_secret_does_not_verify(project, alice_client, django_capture_on_commit_callbacks):
    with running_receiver() as receiver:
        register(alice_client, receiver.url)
        with django_capture_on_commit_callbacks(execute=True):
            import_letters(alice_client)

    request = receiver.requests[0]
    with pytest.raises(ValueError, match="signature"):
        verify_webhook(request.body, request.headers, "whsec_someone-elses")


def test_a_failed_import_sends_job_failed(project, alice_client, django_capture_on_commit_callbacks):
    with running_receiver() as receiver:
        webhook = register(alice_client, receiver.url)
        with django_capture_on_commit_callbacks(execute=True):
            job_id = import_letters(
                alice_client, b'{"document_id": "x", "text": "abc", "entities": [{"start": 9}]}\n'
            )

    assert Job.objects.get(pk=job_id).state == JobState.FAILED
    event = verify_webhook(receiver.requests[0].body, receiver.requests[0].headers, webhook["secret"])
    assert (event["event"], event["status"], event["job"]) == ("job.failed", "failed", job_id)


def test_a_finished_scoring_names_its_run_and_links_the_job_under_the_public_url(
    project, alice_client, settings, django_capture_on_commit_callbacks
):
    settings.PUBLIC_BASE_URL = "https://eval.example.org/"
    load_extraction_gold(project)
    run = create_run(alice_client, prompts=[])
    assert post_documents(alice_client, run["id"], read_jsonl(EXTRACTION / "llm.jsonl")).status_code == 201
    with running_receiver() as receiver:
        webhook = register(alice_client, receiver.url)
        with django_capture_on_commit_callbacks(execute=True):
            finalized = alice_client.post(f"/api/v1/runs/{run['id']}/finalize/")

    assert ExperimentRun.objects.get(pk=run["id"]).status == "scored"
    event = verify_webhook(receiver.requests[0].body, receiver.requests[0].headers, webhook["secret"])
    job_id = finalized.json()["job"]["id"]
    assert (event["event"], event["kind"], event["run"], event["job"]) == (
        "job.succeeded",
        "scoring",
        run["id"],
        job_id,
    )
    assert event["url"] == f"https://eval.example.org/api/v1/jobs/{job_id}/"


def test_a_failing_receiver_is_retried_with_backoff_and_every_attempt_is_logged(
    project, alice_client, monkeypatch, django_capture_on_commit_callbacks
):
    countdowns = []
    schedule = webhook_deliver_task.apply_async

    def record(*args, countdown=None, **kwargs):
        countdowns.append(countdown)
        return schedule(*args, countdown=countdown, **kwargs)

    monkeypatch.setattr(webhook_deliver_task, "apply_async", record)
    with running_receiver(500) as receiver:
        webhook = register(alice_client, receiver.url)
        with django_capture_on_commit_callbacks(execute=True):
            job_id = import_letters(alice_client)

    assert len(receiver.requests) == 5
    assert countdowns == [None, 30, 60, 120, 240]  # the first attempt at once, then backoff
    logged = deliveries(alice_client, webhook["id"])
    assert [row["attempt"] for row in logged] == [5, 4, 3, 2, 1]
    assert {(row["status_code"], row["succeeded"], row["job"]) for row in logged} == {(500, False, job_id)}
    assert all(row["error"].startswith("HTTP 500") for row in logged)
    assert len({row["event_id"] for row in logged}) == 1
    assert Job.objects.get(pk=job_id).state == JobState.SUCCEEDED
    # Each attempt is signed afresh and verifies on its own.
    for request in receiver.requests:
        verify_webhook(request.body, request.headers, webhook["secret"])


def test_a_receiver_that_recovers_gets_no_more_attempts(
    project, alice_client, django_capture_on_commit_callbacks
):
    with running_receiver(503, 500, 204) as receiver:
        webhook = register(alice_client, receiver.url)
        with django_capture_on_commit_callbacks(execute=True):
            import_letters(alice_client)

    assert len(receiver.requests) == 3
    assert [(row["attempt"], row["succeeded"]) for row in deliveries(alice_client, webhook["id"])] == [
        (3, True),
        (2, False),
        (1, False),
    ]


def test_a_redirect_is_not_followed(project, alice_client, settings, django_capture_on_commit_callbacks):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    with running_receiver(302) as receiver:
        webhook = register(alice_client, receiver.url)
        with django_capture_on_commit_callbacks(execute=True):
            import_letters(alice_client)

    assert [request.path for request in receiver.requests] == ["/hooks/evalproject"]
    [logged] = deliveries(alice_client, webhook["id"])
    assert (logged["status_code"], logged["succeeded"]) == (302, False)


def test_an_unreachable_receiver_is_logged_with_the_connection_error(
    project, alice_client, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    webhook = register(alice_client, f"http://127.0.0.1:{port}/hook")
    with django_capture_on_commit_callbacks(execute=True):
        import_letters(alice_client)

    logged = deliveries(alice_client, webhook["id"])
    assert [(row["attempt"], row["status_code"]) for row in logged] == [(2, None), (1, None)]
    assert all(row["error"].startswith("ConnectError") for row in logged)


def test_a_ping_reaches_the_receiver(project, alice_client, django_capture_on_commit_callbacks):
    with running_receiver() as receiver:
        webhook = register(alice_client, receiver.url)
        with django_capture_on_commit_callbacks(execute=True):
            answer = alice_client.post(f"{WEBHOOKS}{webhook['id']}/ping/")

    assert answer.status_code == 202
    event = verify_webhook(receiver.requests[0].body, receiver.requests[0].headers, webhook["secret"])
    assert (event["event"], event["project"], event["job"]) == ("ping", "letters", None)
    assert receiver.requests[0].headers["X-Evalproject-Delivery"] == answer.json()["event_id"]
    assert answer.json()["deliveries_url"] == f"{WEBHOOKS}{webhook['id']}/deliveries/"


def test_a_removed_webhook_gets_nothing(project, alice_client, django_capture_on_commit_callbacks):
    with running_receiver() as receiver:
        webhook = register(alice_client, receiver.url)
        alice_client.delete(f"{WEBHOOKS}{webhook['id']}/")
        with django_capture_on_commit_callbacks(execute=True):
            import_letters(alice_client)

    assert receiver.requests == []
    assert not WebhookDelivery.objects.exists()


def test_a_broker_that_refuses_the_delivery_does_not_fail_the_job(
    project, alice_client, monkeypatch, django_capture_on_commit_callbacks
):
    def broker_down(*args, **kwargs):
        raise ConnectionRefusedError("redis is down")

    monkeypatch.setattr(webhook_deliver_task, "delay", broker_down)
    register(alice_client, "https://ci.example.org/hook")
    with django_capture_on_commit_callbacks(execute=True):
        job_id = import_letters(alice_client)

    assert Job.objects.get(pk=job_id).state == JobState.SUCCEEDED
    assert json.dumps(alice_client.get(f"/api/v1/jobs/{job_id}/").json()["errors"]) == "[]"
