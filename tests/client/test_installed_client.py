"""The client as a pipeline gets it: installed with pip into a fresh virtual environment without
Django, running examples/whole_flow.py (span and attribute data, from project to artefacts) against a
live server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_django.live_server_helper import LiveServer

from annotations.services import api_token_create
from tests.conftest import PROJECT_ROOT

CLIENT = PROJECT_ROOT / "clients" / "python"


def fresh_environment_with_the_client(folder: Path) -> Path:
    """A new virtual environment holding only the client and what it needs; returns its python.

    uv (when present) creates it and installs from its cache, much faster than venv and pip."""
    environment = {
        key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")
    }
    uv = shutil.which("uv")
    if uv:
        subprocess.run(
            [uv, "venv", "--quiet", "--python", sys.executable, str(folder)], check=True, env=environment
        )
        python = folder / "bin" / "python"
        subprocess.run(
            [uv, "pip", "install", "--quiet", "--python", str(python), str(CLIENT)],
            check=True,
            env=environment,
        )
    else:
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, env=environment)
        python = folder / "bin" / "python"
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", str(CLIENT)], check=True, env=environment
        )
    return python


@pytest.fixture
def server(transactional_db):
    """A live server for this test only. pytest-django's `live_server` lives for the whole session,
    and its thread would stay up under later tests that check no other thread runs (forking scorers)."""
    live = LiveServer("localhost")
    try:
        yield live
    finally:
        live.stop()


def lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


@pytest.mark.slow
def test_a_fresh_environment_installs_the_client_and_runs_the_whole_flow(server, alice, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    python = fresh_environment_with_the_client(tmp_path / "venv")
    key = api_token_create(user=alice)[1]

    no_django = subprocess.run([str(python), "-c", "import django"], capture_output=True, cwd=tmp_path)
    gate_help = subprocess.run(
        [str(python.parent / "evalproject-gate"), "--help"], capture_output=True, text=True
    )
    flow = subprocess.run(
        [
            str(python), str(PROJECT_ROOT / "examples" / "whole_flow.py"),
            "--url", server.url, "--token", key,
            "--demo", str(PROJECT_ROOT / "demo"), "--artefacts", str(tmp_path),
        ],
        capture_output=True, text=True, cwd=tmp_path, timeout=900,
        env={key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")},
    )  # fmt: skip

    assert no_django.returncode != 0, "the fresh environment must not hold Django"
    assert gate_help.returncode == 0 and "threshold file" in gate_help.stdout
    assert flow.returncode == 0, flow.stderr[-3000:]
    summary = json.loads(flow.stdout)
    spans, attributes = summary["spans"], summary["attributes"]
    assert spans["gold_import"] == spans["scoring"] == "succeeded"
    assert spans["posted"]["created"] == lines(PROJECT_ROOT / "demo" / "deid" / "predictions.jsonl")
    assert spans["comparison_rows"] > 0
    assert 0 < spans["recall"] <= 1
    assert spans["compared"][0] == spans["run"] and spans["changed_rows"] > 0
    assert len(spans["gate_checks"]) == 2 and spans["gate_passed"] == all(spans["gate_checks"])
    assert attributes["schema_import"] == attributes["gold_import"] == attributes["scoring"] == "succeeded"
    assert attributes["posted"]["created"] == lines(
        PROJECT_ROOT / "demo" / "extraction" / "predictions.jsonl"
    )
    assert attributes["comparison_rows"] > attributes["rows_of_first_attribute"] > 0
    assert attributes["compared"][0] == attributes["run"] and attributes["changed_rows"] > 0
    assert len(attributes["gate_checks"]) == 1
    assert "metrics.json" in attributes["artefacts"] and spans["artefacts"]
