"""The client's requests and answers, against httpx.MockTransport: no server, no Django."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from evalproject_client import (
    AuthenticationError,
    Client,
    Conflict,
    JobFailed,
    JobTimeout,
    NotFound,
    PermissionDenied,
    ServerError,
    ValidationError,
)


class FakeServer:
    """Records every request; `routes` maps (method, path) to a handler or a list of answers in turn."""

    def __init__(self, routes: dict) -> None:
        self.routes = routes
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.routes[(request.method, request.url.path)]
        if isinstance(answer, list):
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if callable(answer):
            return answer(request)
        status, body = answer
        if isinstance(body, Exception):
            raise body
        return httpx.Response(status, json=body)


def client_for(server: FakeServer, **options) -> Client:
    options = {"backoff_seconds": 0, "poll_seconds": 0, **options}
    return Client("http://eval.test/", "secret-token", transport=httpx.MockTransport(server), **options)


def test_every_request_carries_the_token_and_goes_under_api_v1():
    server = FakeServer({("GET", "/api/v1/runs/7/"): (200, {"id": 7})})
    with client_for(server) as client:
        assert client.run(7) == {"id": 7}
    assert server.requests[0].headers["Authorization"] == "Token secret-token"


def test_create_project_puts_fields_at_the_top_and_other_keywords_in_settings():
    server = FakeServer({("POST", "/api/v1/projects/"): (201, {"slug": "p"})})
    with client_for(server) as client:
        client.create_project("p", "P", description="d", edit_distance_match_threshold=0.8)
    assert json.loads(server.requests[0].content) == {
        "slug": "p",
        "name": "P",
        "description": "d",
        "settings": {"edit_distance_match_threshold": 0.8},
    }


def test_predictions_go_in_batches_each_with_its_own_idempotency_key():
    def store(request: httpx.Request) -> httpx.Response:
        documents = json.loads(request.content)["documents"]
        return httpx.Response(
            201, json={"counts": {"created": len(documents), "unchanged": 0, "replaced": 0}}
        )

    server = FakeServer({("POST", "/api/v1/runs/3/predictions/"): store})
    documents = [{"document_id": str(number)} for number in range(5)]
    with client_for(server) as client:
        totals = client.post_predictions({"id": 3}, documents, batch_size=2)

    assert totals == {"created": 5, "unchanged": 0, "replaced": 0, "batches": 3}
    assert [len(json.loads(r.content)["documents"]) for r in server.requests] == [2, 2, 1]
    assert len({r.headers["Idempotency-Key"] for r in server.requests}) == 3


@pytest.mark.parametrize(
    "failure", [(502, {"detail": "bad gateway"}), (0, httpx.ReadError("connection reset"))]
)
def test_a_failed_batch_is_sent_again_with_the_same_key(failure):
    stored = (201, {"counts": {"created": 1, "unchanged": 0, "replaced": 0}})
    server = FakeServer({("POST", "/api/v1/runs/3/predictions/"): [failure, failure, stored]})
    with client_for(server) as client:
        totals = client.post_predictions(3, [{"document_id": "a"}])

    assert totals["created"] == 1
    assert len(server.requests) == 3
    assert len({r.headers["Idempotency-Key"] for r in server.requests}) == 1


def test_a_server_error_that_persists_raises_server_error_after_the_retries():
    server = FakeServer({("GET", "/api/v1/runs/3/"): (503, {"detail": "down"})})
    with client_for(server, retries=2) as client, pytest.raises(ServerError) as error:
        client.run(3)
    assert len(server.requests) == 3
    assert error.value.status == 503 and error.value.detail == "down"


def test_creating_a_run_is_not_retried():
    server = FakeServer({("POST", "/api/v1/projects/p/runs/"): (502, {"detail": "bad gateway"})})
    with client_for(server) as client, pytest.raises(ServerError):
        client.create_run("p", "r", "spans")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, ValidationError),
        (401, AuthenticationError),
        (403, PermissionDenied),
        (404, NotFound),
        (409, Conflict),
    ],
)
def test_each_error_status_raises_its_own_exception(status, error_class):
    server = FakeServer({("POST", "/api/v1/runs/3/finalize/"): (status, {"detail": "no", "code": "why"})})
    with client_for(server) as client, pytest.raises(error_class) as error:
        client.finalize(3)
    assert (error.value.status, error.value.detail, error.value.code) == (status, "no", "why")


def test_field_errors_become_problems_naming_their_field():
    body = {"name": ["This field is required."], "kind": ['"x" is not a valid choice.']}
    server = FakeServer({("POST", "/api/v1/projects/p/runs/"): (400, body)})
    with client_for(server) as client, pytest.raises(ValidationError) as error:
        client.create_run("p", "", "x")
    assert error.value.problems == [
        {"field": "name", "message": "This field is required."},
        {"field": "kind", "message": '"x" is not a valid choice.'},
    ]
    assert "This field is required. (field name)" in error.value.detail


def test_a_batch_refused_for_its_documents_lists_each_problem():
    body = {
        "detail": "invalid batch",
        "code": "invalid_batch",
        "errors": [{"document_id": "d1", "message": "m"}],
    }
    server = FakeServer({("POST", "/api/v1/runs/3/predictions/"): (400, body)})
    with client_for(server) as client, pytest.raises(ValidationError) as error:
        client.post_predictions(3, [{"document_id": "d1"}])
    assert error.value.problems == [{"document_id": "d1", "message": "m"}]


def job(status: str, **fields) -> tuple[int, dict]:
    return 200, {"id": 9, "kind": "scoring", "status": status, "progress": {"done": 1, "total": 2}, **fields}


def test_finalize_waits_for_the_scoring_job_and_returns_it():
    server = FakeServer(
        {
            ("POST", "/api/v1/runs/3/finalize/"): (202, {"run": 3, "job": {"id": 9}}),
            ("GET", "/api/v1/jobs/9/"): [job("queued"), job("running"), job("succeeded")],
        }
    )
    with client_for(server) as client:
        finished = client.finalize(3)
    assert finished["status"] == "succeeded"
    assert [r.url.path for r in server.requests].count("/api/v1/jobs/9/") == 3


def test_a_failed_job_raises_job_failed_with_its_errors():
    errors = [{"message": "no gold", "file": None}]
    server = FakeServer(
        {
            ("POST", "/api/v1/runs/3/rescore/"): (202, {"run": 3, "job": {"id": 9}}),
            ("GET", "/api/v1/jobs/9/"): job("failed", errors=errors),
        }
    )
    with client_for(server) as client, pytest.raises(JobFailed) as failure:
        client.rescore(3)
    assert failure.value.errors == errors
    assert "no gold" in str(failure.value)


def test_waiting_gives_up_after_the_timeout():
    server = FakeServer({("GET", "/api/v1/jobs/9/"): job("running")})
    with client_for(server) as client, pytest.raises(JobTimeout) as timeout:
        client.wait_for_job(9, timeout=0)
    assert timeout.value.job["status"] == "running"


def test_import_file_uploads_the_file_with_its_format_and_label_map(tmp_path: Path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"document_id": "a"}\n')
    server = FakeServer(
        {
            ("POST", "/api/v1/projects/p/imports/"): (202, {"id": 9, "status": "queued"}),
            ("GET", "/api/v1/jobs/9/"): job("succeeded", kind="import"),
        }
    )
    with client_for(server) as client:
        finished = client.import_file("p", gold, "jsonl", label_map={"PER": "NAME"})
    upload = server.requests[0]
    assert finished["kind"] == "import"
    assert upload.headers["Content-Type"].startswith("multipart/form-data")
    assert b'filename="gold.jsonl"' in upload.content and b'{"PER": "NAME"}' in upload.content


def test_comparison_rows_follow_next_until_the_last_page():
    second = "http://eval.test/api/v1/runs/3/comparison/?cursor=abc&match_status=x"
    server = FakeServer(
        {
            ("GET", "/api/v1/runs/3/comparison/"): [
                (200, {"next": second, "results": [{"position": 0}, {"position": 1}]}),
                (200, {"next": None, "results": [{"position": 2}]}),
            ]
        }
    )
    with client_for(server) as client:
        rows = list(client.comparison_rows(3, match_status="x", attribute_presence=False))
    assert [row["position"] for row in rows] == [0, 1, 2]
    first = server.requests[0].url.params
    assert (first["match_status"], first["attribute_presence"], first["page_size"]) == ("x", "false", "1000")
    assert server.requests[1].url.params["cursor"] == "abc"


def test_gate_returns_the_verdict_and_reads_a_threshold_file(tmp_path: Path):
    thresholds = tmp_path / "thresholds.json"
    thresholds.write_text(json.dumps({"checks": [{"metric": "accuracy", "attribute": "1", "min": 0.9}]}))
    checks = [{"metric": "accuracy", "passed": False, "observed": 0.5}]
    server = FakeServer({("POST", "/api/v1/runs/3/gate/"): (200, {"passed": False, "checks": checks})})
    with client_for(server) as client:
        result = client.gate(3, thresholds)
    assert not result.passed and not result
    assert result.failed_checks == checks
    assert json.loads(server.requests[0].content)["checks"][0]["min"] == 0.9


def test_download_artefacts_writes_the_zip_and_leaves_nothing_on_an_error(tmp_path: Path):
    server = FakeServer(
        {
            ("GET", "/api/v1/runs/3/artefacts.zip"): lambda request: httpx.Response(200, content=b"PK zip"),
            ("GET", "/api/v1/runs/4/artefacts.zip"): (404, {"detail": "Not found."}),
        }
    )
    with client_for(server) as client:
        path = client.download_artefacts(3, tmp_path / "a.zip")
        with pytest.raises(NotFound):
            client.download_artefacts(4, tmp_path / "b.zip")
    assert path.read_bytes() == b"PK zip"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zip"]


def test_compare_sends_both_runs_and_the_options():
    server = FakeServer({("GET", "/api/v1/runs/compare/"): (200, {"deltas": []})})
    with client_for(server) as client:
        client.compare({"id": 1}, 2, paired=False)
    assert dict(server.requests[0].url.params) == {"a": "1", "b": "2", "paired": "false"}


def test_posting_draws_a_progress_bar_when_asked(capsys):
    def store(request: httpx.Request) -> httpx.Response:
        documents = json.loads(request.content)["documents"]
        return httpx.Response(
            201, json={"counts": {"created": len(documents), "unchanged": 0, "replaced": 0}}
        )

    server = FakeServer({("POST", "/api/v1/runs/3/predictions/"): store})
    with client_for(server, progress=True) as client:
        client.post_predictions(3, [{"document_id": str(n)} for n in range(4)], batch_size=2)

    drawn = capsys.readouterr().err
    assert "2/4" in drawn and "4/4" in drawn and drawn.endswith("\n")


def test_no_progress_bar_when_stderr_is_not_a_terminal(capsys):
    server = FakeServer({("POST", "/api/v1/runs/3/predictions/"): (201, {"counts": {"created": 1}})})
    with client_for(server) as client:
        client.post_predictions(3, [{"document_id": "a"}])
    assert capsys.readouterr().err == ""


def test_create_run_reads_a_yaml_config_file_and_a_prompt_csv(tmp_path: Path):
    config = tmp_path / "config.yaml"
    config.write_text("model: small\ntemperature: 0\n")
    prompts = tmp_path / "prompts.csv"
    prompts.write_text(
        "prompt,output_data_type,attribute_id,attribute_label\nRandomised?,bool,201,Randomised\n"
    )
    server = FakeServer({("POST", "/api/v1/projects/p/runs/"): (201, {"id": 4})})
    with client_for(server) as client:
        client.create_run("p", "v1", "attributes", config=config, prompts=prompts, model="small")

    body = json.loads(server.requests[0].content)
    assert body["config"] == "model: small\ntemperature: 0\n"
    assert body["prompts"] == [
        {
            "prompt": "Randomised?",
            "output_data_type": "bool",
            "attribute_id": "201",
            "attribute_label": "Randomised",
        }
    ]
    assert (body["name"], body["kind"], body["model"]) == ("v1", "attributes", "small")


def test_next_pages_are_asked_of_the_clients_server_whatever_host_the_link_names():
    inner = "http://10.0.0.7:8000/api/v1/runs/3/comparison/?cursor=abc"
    server = FakeServer(
        {
            ("GET", "/api/v1/runs/3/comparison/"): [
                (200, {"next": inner, "results": [{"position": 0}]}),
                (200, {"next": None, "results": [{"position": 1}]}),
            ]
        }
    )
    with client_for(server) as client:
        assert [row["position"] for row in client.comparison_rows(3)] == [0, 1]
    assert str(server.requests[1].url) == "http://eval.test/api/v1/runs/3/comparison/?cursor=abc"
