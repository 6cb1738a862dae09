"""dave the auditor checks that no one tuned on test data, without becoming able to see any gold himself."""

from __future__ import annotations

import pytest

from experiments.models import RunStage
from experiments.splits import split_assign_development
from tests.conftest import token_client
from tests.splits.conftest import make_run


@pytest.fixture
def dave_client(dave):
    return token_client(dave)


def test_dave_reads_the_split_status_and_the_events(letters, alice, dave_client):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)

    assert dave_client.get("/api/v1/projects/letters/splits/").status_code == 200
    assert len(dave_client.get("/api/v1/projects/letters/splits/events/").json()["results"]) == 21


@pytest.mark.parametrize("what", ["metrics", "comparison", "metric-values", "artefacts.zip"])
def test_dave_gets_403_on_metrics_comparison_rows_and_exports(letters, dave_client, what):
    run = make_run(letters, stage=RunStage.DEVELOPMENT)

    assert (
        dave_client.get(f"/api/v1/runs/{run.pk}/{what}" + ("" if what.endswith(".zip") else "/")).status_code
        == 403
    )


def test_dave_gets_403_on_documents_and_runs(letters, dave_client):
    assert dave_client.get("/api/v1/projects/letters/documents/").status_code == 403
    assert dave_client.get("/api/v1/projects/letters/runs/").status_code == 403
