"""examples/post_from_pipeline.py against a live server: a pipeline's whole round trip."""

from __future__ import annotations

import importlib.util

import pytest

from annotations.services import api_token_create
from tests.api.runs_support import EXTRACTION, load_extraction_gold
from tests.conftest import PROJECT_ROOT


def _example_module():
    spec = importlib.util.spec_from_file_location(
        "post_from_pipeline", PROJECT_ROOT / "examples" / "post_from_pipeline.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.django_db(transaction=True)
def test_the_example_posts_a_run_and_prints_its_metrics(project, alice, live_server, capsys):
    load_extraction_gold(project)
    key = api_token_create(user=alice)[1]

    status = _example_module().main(
        [
            "--url", live_server.url,
            "--token", key,
            "--project", "letters",
            "--config", str(EXTRACTION / "config.yaml"),
            "--prompts", str(EXTRACTION / "prompts.csv"),
            "--predictions", str(EXTRACTION / "llm.jsonl"),
            "--model", "gpt-4o-mini",
        ]
    )  # fmt: skip

    assert status == 0
    output = capsys.readouterr().out
    assert "Participants" in output and '"accuracy": 0.5' in output
    assert "cost $0.0046" in output
