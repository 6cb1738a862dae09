"""`manage.py gate`: a CI job holds a run's metrics to a threshold file; exit 0 pass, 1 fail, 2 bad input.

Offline it reads files; online it reads the run (and its baselines) from the server, here the real app
in-process through httpx's WSGI transport.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections

from annotations.services import api_token_create
from metrics.management.commands import gate as gate_command
from tests.pipeline.intervals.scored_runs import interval, metrics_json, scored_run


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def run_gate(*arguments: str) -> tuple[int, str]:
    """(exit status, printed table)."""
    stdout = io.StringIO()
    try:
        call_command("gate", *arguments, stdout=stdout, stderr=io.StringIO())
    except CommandError as error:
        return error.returncode, stdout.getvalue() + str(error)
    return 0, stdout.getvalue()


SPAN_RESULTS = {
    "micro": {"chars": {"all": {"recall": 0.97, "recall_ci": interval(0.93, 0.99), "precision": None}}},
    "leakage": {"any_char": {"rate_all_documents": 0.04, "rate_all_documents_ci": interval(0.02, 0.07)}},
}


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write(tmp_path / "results.json", SPAN_RESULTS)


def thresholds(tmp_path: Path, *checks: dict) -> Path:
    return write(tmp_path / "thresholds.json", {"checks": list(checks)})


def test_a_passing_gate_exits_0_with_a_table_of_every_check(tmp_path, results):
    status, output = run_gate(
        "--thresholds",
        str(thresholds(
            tmp_path,
            {"metric": "micro.chars.all.recall", "min": 0.95},
            {"metric": "leakage.any_char.rate_all_documents", "max": 0.1, "on": "upper_bound"},
        )),
        "--metrics", str(results),
    )  # fmt: skip

    assert status == 0
    lines = output.splitlines()
    assert lines[0].split()[:4] == ["#", "metric", "attribute", "on"]
    assert "micro.chars.all.recall" in lines[2] and "PASS" in lines[2]
    assert "leakage.any_char.rate_all_documents" in lines[3] and "upper_bound" in lines[3]
    assert "Gate PASSED: 2 of 2 checks passed." in output


def test_a_null_metric_fails_the_gate_with_its_reason(tmp_path, results):
    status, output = run_gate(
        "--thresholds", str(thresholds(tmp_path, {"metric": "micro.chars.all.precision", "min": 0.5})),
        "--metrics", str(results),
    )  # fmt: skip

    assert status == 1
    assert "FAIL" in output and "micro.chars.all.precision is null" in output
    assert "gate failed: 1 of 1 checks failed" in output


def test_the_lower_bound_can_fail_where_the_estimate_passes(tmp_path, results):
    estimate = thresholds(tmp_path, {"metric": "micro.chars.all.recall", "min": 0.95})
    assert run_gate("--thresholds", str(estimate), "--metrics", str(results))[0] == 0

    bound = thresholds(tmp_path, {"metric": "micro.chars.all.recall", "min": 0.95, "on": "lower_bound"})
    status, output = run_gate("--thresholds", str(bound), "--metrics", str(results))

    assert status == 1
    assert "0.93 does not meet >= 0.95" in output


def test_a_missing_interval_fails_a_bound_check(tmp_path):
    metrics = write(tmp_path / "metrics.json", metrics_json(0.9, 0.8, 0.95))
    check = {"metric": "mean_absolute_error", "attribute": "103", "max": 2, "on": "upper_bound"}

    status, output = run_gate("--thresholds", str(thresholds(tmp_path, check)), "--metrics", str(metrics))

    assert status == 1
    assert "mean_absolute_error of attribute 103 has no interval" in output


def test_non_inferiority_to_a_baseline_file(tmp_path):
    candidate = write(tmp_path / "candidate.json", metrics_json(0.90, 0.85, 0.95))
    baseline = write(tmp_path / "baseline.json", metrics_json(0.91, 0.86, 0.96))
    check = {"metric": "accuracy", "attribute": "101", "baseline": "run-41", "margin": 0.02}
    threshold_file = str(thresholds(tmp_path, check))

    assert (
        run_gate(
            "--thresholds", threshold_file, "--metrics", str(candidate), "--baseline", f"run-41={baseline}"
        )[0]
        == 0
    )
    status, output = run_gate("--thresholds", threshold_file, "--metrics", str(candidate))
    assert status == 1
    assert "baseline run run-41 was not supplied" in output


@pytest.mark.parametrize(
    ("threshold_text", "message"),
    [
        ('{"checks": [{"metric": "accuracy", "min": "high"}]}', "checks[0].min: must be a number"),
        ('{"checks": [', "not valid JSON"),
    ],
)
def test_a_malformed_threshold_file_exits_2(tmp_path, results, threshold_text, message):
    path = tmp_path / "thresholds.json"
    path.write_text(threshold_text, encoding="utf-8")

    status, output = run_gate("--thresholds", str(path), "--metrics", str(results))

    assert status == 2
    assert str(path) in output and message in output


def test_an_unreadable_metrics_file_exits_2_naming_file_and_line(tmp_path):
    broken = tmp_path / "results.json"
    broken.write_text('{\n  "micro": ,\n}', encoding="utf-8")

    status, output = run_gate(
        "--thresholds", str(thresholds(tmp_path, {"metric": "micro.chars.all.recall", "min": 0.9})),
        "--metrics", str(broken),
    )  # fmt: skip

    assert status == 2
    assert f"{broken}, line 2: not valid JSON" in output
    status, output = run_gate(
        "--thresholds", str(tmp_path / "thresholds.json"), "--metrics", str(tmp_path / "absent.json")
    )
    assert status == 2 and "absent.json: cannot read it" in output


def test_a_baseline_option_needs_an_id_and_a_file(tmp_path, results):
    status, output = run_gate(
        "--thresholds", str(thresholds(tmp_path, {"metric": "micro.chars.all.recall", "min": 0.9})),
        "--metrics", str(results), "--baseline", "results.json",
    )  # fmt: skip

    assert status == 2 and "expected RUN_ID=FILE" in output


@pytest.fixture
def server(monkeypatch) -> Iterator[None]:
    """The app in-process, as the gate command's server (requests keep the test's connection)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    monkeypatch.setattr(gate_command.Command, "transport", httpx.WSGITransport(app=get_wsgi_application()))
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.mark.django_db
def test_online_the_run_and_its_baseline_come_from_the_server(tmp_path, project, bob, server):
    baseline = scored_run(project, metrics_json(0.92, 0.86, 0.97), name="baseline")
    candidate = scored_run(project, metrics_json(0.91, 0.84, 0.96), name="candidate")
    key = api_token_create(user=bob)[1]
    check = {"metric": "accuracy", "attribute": "101", "baseline": str(baseline.pk), "margin": 0.02}
    online = ["--run", str(candidate.pk), "--server", "http://testserver", "--token", key]

    assert run_gate("--thresholds", str(thresholds(tmp_path, check)), *online)[0] == 0
    bound = {"metric": "accuracy", "attribute": "101", "min": 0.85, "on": "lower_bound"}
    status, output = run_gate("--thresholds", str(thresholds(tmp_path, bound)), *online)
    assert status == 1 and "0.84 does not meet >= 0.85" in output


@pytest.mark.django_db
def test_online_a_run_the_token_cannot_read_exits_2(tmp_path, project, charlie, server):
    run = scored_run(project, metrics_json(0.9, 0.8, 0.95))
    key = api_token_create(user=charlie)[1]

    status, output = run_gate(
        "--thresholds", str(thresholds(tmp_path, {"metric": "accuracy", "attribute": "101", "min": 0.5})),
        "--run", str(run.pk), "--server", "http://testserver", "--token", key,
    )  # fmt: skip

    assert status == 2
    assert f"GET http://testserver/api/v1/runs/{run.pk}/metrics/: 404" in output


def test_online_needs_a_server_and_a_token(tmp_path):
    status, output = run_gate(
        "--thresholds", str(thresholds(tmp_path, {"metric": "accuracy", "attribute": "101", "min": 0.5})),
        "--run", "7",
    )  # fmt: skip

    assert status == 2 and "--run needs --server and --token" in output


@pytest.mark.parametrize(
    ("check", "named"),
    [
        ({"metric": "micro.chars.all.recal", "min": 0.9}, "'micro.chars.all.recal'"),
        ({"metric": "acuracy", "attribute": "101", "min": 0.9}, "'acuracy'"),
    ],
)
def test_a_threshold_file_naming_an_unknown_metric_exits_2(tmp_path, results, check, named):
    if "attribute" in check:
        metrics = write(tmp_path / "metrics.json", metrics_json(0.9, 0.8, 0.95))
        known = {"metric": "accuracy", "attribute": "101", "min": 0.5}
    else:
        metrics, known = results, {"metric": "micro.chars.all.recall", "min": 0.5}
    path = thresholds(tmp_path, known, check)

    status, output = run_gate("--thresholds", str(path), "--metrics", str(metrics))

    assert status == 2
    assert output == f"{path}: checks[1].metric: unknown metric {named} for this document"


def test_a_span_metric_held_against_an_attribute_run_exits_2(tmp_path):
    metrics = write(tmp_path / "metrics.json", metrics_json(0.9, 0.8, 0.95))
    path = thresholds(tmp_path, {"metric": "micro.chars.all.recall", "min": 0.5})
    assert run_gate("--thresholds", str(path), "--metrics", str(metrics))[0] == 2


def test_a_known_metric_that_metrics_json_omits_still_fails_as_a_check(tmp_path):
    metrics = write(tmp_path / "metrics.json", metrics_json(0.9, 0.8, 0.95))
    path = thresholds(tmp_path, {"metric": "f1_score", "attribute": "101", "min": 0.5})
    status, output = run_gate("--thresholds", str(path), "--metrics", str(metrics))
    assert status == 1
    assert "f1_score of attribute 101 is missing" in output


def test_the_help_shows_the_threshold_format_with_an_example():
    parser = gate_command.Command().create_parser("manage.py", "gate")
    text = parser.format_help()
    for phrase in (
        '{"checks": [',
        '"on"',
        "lower_bound",
        '"baseline"',
        "Example",
        "exit status",
        "manage.py gate",
    ):
        assert phrase in text
