"""`evalproject-gate` (the client's command for CI) against the real app, in-process: it creates a run,
posts, finalizes, gates, and says pass (0), fail (1) or undecided (2)."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import httpx
import pytest
from django.core.wsgi import get_wsgi_application
from evalproject_client.gate_command import main

from annotations.services import api_token_create
from experiments.models import ExperimentRun
from tests.api.runs_support import EXTRACTION, load_extraction_gold

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def gate(project, alice, tmp_path):
    load_extraction_gold(project)
    key = api_token_create(user=alice)[1]
    transport = httpx.WSGITransport(app=get_wsgi_application())

    def run(checks: list[dict] | str, *extra: str) -> int:
        thresholds = tmp_path / "thresholds.json"
        thresholds.write_text(checks if isinstance(checks, str) else json.dumps({"checks": checks}))
        arguments = ["--url", "http://testserver", "--token", key, "--thresholds", str(thresholds), *extra]
        return main(arguments, transport=transport)

    return run


def new_run(*extra: str) -> tuple[str, ...]:
    return (
        "--project", "letters", "--name", "main@abc1234",
        "--predictions", str(EXTRACTION / "llm.jsonl"),
        "--config", str(EXTRACTION / "config.yaml"), "--prompts", str(EXTRACTION / "prompts.csv"),
        *extra,
    )  # fmt: skip


def test_it_scores_a_new_run_and_exits_0_when_every_check_passes(gate, capsys, tmp_path):
    status = gate(
        [{"metric": "accuracy_given_prediction", "attribute": "101", "min": 0.0, "on": "lower_bound"}],
        *new_run("--artefacts", str(tmp_path / "bundle.zip")),
    )

    output = capsys.readouterr()
    assert status == 0, output.err
    assert "PASS  accuracy_given_prediction [101] (lower_bound)" in output.out
    assert "gate passed" in output.out
    assert "metrics.json" in zipfile.ZipFile(tmp_path / "bundle.zip").namelist()


def test_it_exits_1_when_a_check_fails(gate, capsys):
    status = gate([{"metric": "accuracy_given_prediction", "attribute": "101", "min": 1.01}], *new_run())

    assert status == 1
    assert "FAIL  accuracy_given_prediction [101]" in capsys.readouterr().out


def test_it_gates_an_existing_run_with_run(gate, capsys):
    assert gate([{"metric": "accuracy_given_prediction", "attribute": "101", "min": 0.0}], *new_run()) == 0
    run = ExperimentRun.objects.get()
    capsys.readouterr()

    status = gate(
        [{"metric": "accuracy_given_prediction", "attribute": "101", "max": -1.0}], "--run", str(run.pk)
    )

    assert status == 1
    assert f"run {run.pk}: gate FAILED" in capsys.readouterr().out
    assert ExperimentRun.objects.count() == 1


def test_a_threshold_file_the_server_refuses_exits_2_naming_the_problem(gate, capsys):
    status = gate([{"metric": "accuracy", "min": 0.5, "mnax": 1}], "--run", "999")

    assert status == 2
    assert "evalproject-gate:" in capsys.readouterr().err


def test_a_threshold_file_that_is_not_json_exits_2(gate, capsys):
    assert gate("{not json", *new_run()) == 2
    assert "evalproject-gate:" in capsys.readouterr().err


def test_the_command_is_installed_with_the_client():
    # Beside the interpreter: the environment's bin folder need not be on PATH.
    assert (Path(sys.executable).parent / "evalproject-gate").is_file()
