"""The Python client (clients/python) against the real app, in-process through httpx's WSGI transport."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator

import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from evalproject_client import Client, JobFailed, NotFound, ValidationError

from annotations.services import api_token_create
from experiments.models import ExperimentRun, RunDocument
from tests.api.runs_support import (
    EXTRACTION,
    SPANS,
    load_extraction_gold,
    load_span_gold,
    prompts_as_run_prompts,
    read_jsonl,
)

pytestmark = pytest.mark.django_db
BASE_URL = "http://testserver"


class FlakyTransport(httpx.BaseTransport):
    """Delivers each of the first `failures` prediction posts, then loses the answer (a dropped connection
    after the server stored the batch) or answers 502 like a proxy would."""

    def __init__(self, inner: httpx.BaseTransport, *, failures: int, mode: str) -> None:
        self.inner = inner
        self.failures = failures
        self.mode = mode
        self.keys: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/predictions/"):
            self.keys.append(request.headers["Idempotency-Key"])
            if self.failures > 0:
                self.failures -= 1
                if self.mode == "lost_answer":
                    self.inner.handle_request(request).read()
                    raise httpx.ReadError("connection reset by peer", request=request)
                return httpx.Response(502, text="Bad Gateway", request=request)
        return self.inner.handle_request(request)


@pytest.fixture
def wsgi() -> Iterator[httpx.WSGITransport]:
    """The app in-process. As Django's test client does, requests must not close the test's database
    connection (the test's transaction holds every row)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield httpx.WSGITransport(app=get_wsgi_application())
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def alice_key(alice) -> str:
    return api_token_create(user=alice)[1]


def test_a_pipeline_posts_finalizes_waits_and_reads_its_results(
    project, alice_key, wsgi, tmp_path, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    with Client(BASE_URL, alice_key, transport=wsgi) as client:
        run = client.create_run(
            "letters",
            "gpt-4o-mini",
            "attributes",
            config=EXTRACTION / "config.yaml",
            prompts=prompts_as_run_prompts(),
            model="gpt-4o-mini",
        )
        counts = client.post_predictions(run, read_jsonl(EXTRACTION / "llm.jsonl"), batch_size=2)
        with django_capture_on_commit_callbacks(execute=True):
            queued = client.finalize(run, wait=False)
        job = client.wait_for_job(queued, timeout=10, poll_seconds=0.01)
        scored = client.run(run)
        metrics = client.metrics(run)
        rows = list(client.comparison_rows(run, page_size=5))
        country = list(client.comparison_rows(run, attribute="102"))
        absent = list(client.comparison_rows(run, attribute_presence=False))
        path = client.download_artefacts(run, tmp_path)

    assert counts == {"created": 3, "unchanged": 0, "replaced": 0, "batches": 2}
    assert job["status"] == "succeeded" and job["kind"] == "scoring"
    assert scored["status"] == "scored"
    assert metrics["extraction_run_id"] == str(run["id"])
    assert [row["position"] for row in rows] == list(range(12))
    assert len(country) == 3
    assert len(absent) == 2
    assert path == tmp_path / f"run-{run['id']}-artefacts.zip"
    assert "metrics.json" in zipfile.ZipFile(path).namelist()


def test_posting_the_same_documents_again_reports_them_unchanged(project, alice_key, wsgi):
    load_span_gold(project)
    documents = read_jsonl(SPANS / "spans_predictions.jsonl")
    with Client(BASE_URL, alice_key, transport=wsgi) as client:
        run = client.create_run("letters", "deid", "spans")
        client.post_predictions(run, documents)
        again = client.post_predictions(run, documents)

    assert again == {"created": 0, "unchanged": 3, "replaced": 0, "batches": 1}


@pytest.mark.parametrize("mode", ["lost_answer", "bad_gateway"])
def test_a_batch_is_retried_with_its_idempotency_key_and_stored_once(project, alice_key, wsgi, mode):
    load_extraction_gold(project)
    flaky = FlakyTransport(wsgi, failures=2, mode=mode)
    with Client(BASE_URL, alice_key, transport=flaky, backoff_seconds=0) as client:
        run = client.create_run(
            "letters", name="flaky network", kind="attributes", prompts=prompts_as_run_prompts()
        )
        counts = client.post_predictions(run, read_jsonl(EXTRACTION / "llm.jsonl"))

    assert len(flaky.keys) == 3 and len(set(flaky.keys)) == 1
    assert counts["created"] == 3
    assert RunDocument.objects.filter(run_id=run["id"]).count() == 3


def test_errors_carry_the_status_and_the_servers_reasons(project, alice_key, wsgi):
    load_extraction_gold(project)
    with Client(BASE_URL, alice_key, transport=wsgi) as client:
        run = client.create_run("letters", name="bad", kind="attributes", prompts=prompts_as_run_prompts())
        with pytest.raises(ValidationError) as error:
            client.post_predictions(run, [{"document_id": "nope", "context": "", "annotations": []}])

    assert error.value.status == 400
    assert error.value.problems[0]["document_id"] == "nope"
    assert error.value.code == "invalid_batch"


def test_waiting_raises_job_failed_with_the_jobs_errors_when_the_scoring_failed(
    project, alice_key, wsgi, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    with Client(BASE_URL, alice_key, transport=wsgi) as client:
        run = client.create_run(
            "letters", name="bad metric", kind="attributes", prompts=prompts_as_run_prompts()
        )
        ExperimentRun.objects.filter(pk=run["id"]).update(
            config={"custom_evaluation_metrics": ["no_such_metric"]}
        )
        client.post_predictions(run, read_jsonl(EXTRACTION / "llm.jsonl"))
        with django_capture_on_commit_callbacks(execute=True):
            queued = client.finalize(run, wait=False)
        with pytest.raises(JobFailed) as failure:
            client.wait_for_job(queued, timeout=5, poll_seconds=0.01)

    assert "no_such_metric" in str(failure.value)
    assert failure.value.job["status"] == "failed" and failure.value.errors


def test_an_outsider_token_gets_404(project, charlie, wsgi):
    key = api_token_create(user=charlie)[1]
    with Client(BASE_URL, key, transport=wsgi) as client, pytest.raises(NotFound) as error:
        client.create_run("letters", "x", "spans")
    assert error.value.status == 404
