"""Fixtures shared by the API tests of runs: a run of each kind, open, on the loaded test gold, with no
predictions yet. (tests/api/test_results.py defines its own, scored, under the same names.)"""

from __future__ import annotations

import pytest

from tests.api.runs_support import create_run, load_extraction_gold, load_span_gold, prompts_as_run_prompts


@pytest.fixture
def attribute_run(project, alice_client) -> dict:
    load_extraction_gold(project)
    return create_run(alice_client, prompts=prompts_as_run_prompts())


@pytest.fixture
def span_run(project, alice_client) -> dict:
    load_span_gold(project)
    return create_run(alice_client, kind="spans")
