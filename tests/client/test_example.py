"""examples/post_from_pipeline.py end to end: a pipeline's whole round trip through the client.

The example builds its own Client from --url; here that client talks to the app in-process (httpx's
WSGI transport), so no server thread outlives the test.
"""

from __future__ import annotations

import functools
import importlib.util

import httpx
import pytest
from django.core.wsgi import get_wsgi_application
from evalproject_client import Client

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
def test_the_example_posts_a_run_and_prints_its_metrics(project, alice, capsys, monkeypatch):
    load_extraction_gold(project)
    key = api_token_create(user=alice)[1]
    example = _example_module()
    transport = httpx.WSGITransport(app=get_wsgi_application())
    monkeypatch.setattr(example, "Client", functools.partial(Client, transport=transport))

    status = example.main(
        [
            "--url", "http://testserver",
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
