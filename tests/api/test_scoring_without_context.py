"""Posted predictions whose context is null or absent are scored on the server: blank source and
verbatim cells, neither source stratum, and a warning on the scoring job counting such documents."""

from __future__ import annotations

import pytest

from annotations.models import Job
from experiments.models import RunDocument
from metrics.models import ComparisonRow
from tests.api.runs_support import (
    EXTRACTION,
    create_run,
    finalize,
    load_extraction_gold,
    post_documents,
    prompts_as_run_prompts,
    read_jsonl,
)

pytestmark = pytest.mark.django_db


def test_a_run_with_documents_without_context_is_scored_with_blank_cells_and_a_warning(
    project, alice_client, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    run = create_run(alice_client, prompts=prompts_as_run_prompts())
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    documents[0]["context"] = None  # 1001: null
    del documents[1]["context"]  # 1002: absent

    assert post_documents(alice_client, run["id"], documents).status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        body = finalize(alice_client, run["id"])

    job = Job.objects.get(pk=body["job"]["id"])
    assert job.state == "succeeded", job.errors
    assert RunDocument.objects.filter(run_id=run["id"], context__isnull=True).count() == 2
    rows = ComparisonRow.objects.filter(run_id=run["id"], document__external_id__in=["1001", "1002"])
    string_and_numbers = [row for row in rows if row.attribute.type != "BOOL"]
    assert string_and_numbers
    for row in string_and_numbers:
        assert row.columns["gold_value_in_context"] is None
        assert row.columns["human_verbatim_fuzzy_match_pct"] is None
        assert row.columns["llm_verbatim_fuzzy_match_pct"] is None
        assert row.match_status
    assert any(
        "2 document(s) have a prediction without a context" in str(warning) for warning in job.warnings
    )
    csv_text = b"".join(
        alice_client.get(f"/api/v1/runs/{run['id']}/comparison/", {"format": "csv"}).streaming_content
    ).decode()
    assert "1001" in csv_text
