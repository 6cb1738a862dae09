"""A scoring fanned out as a Celery chord (the setting SCORING_EXECUTOR=celery: a task per chunk of documents,
each reading its own documents, and a final task that merges) stores exactly what one process stores:
the same report, metric values and comparison rows, whatever the chunk size."""

from __future__ import annotations

import pytest

from annotations.models import Job
from metrics.models import ComparisonRow, MetricValue, Scoring, ScoringChunk
from tests.api.runs_support import (
    EXTRACTION,
    SPANS,
    create_run,
    finalize,
    load_extraction_gold,
    load_span_gold,
    post_documents,
    prompts_as_run_prompts,
    read_jsonl,
)

pytestmark = pytest.mark.django_db


def stored(run_id: int) -> dict:
    scoring = Scoring.objects.get(run_id=run_id)
    return {
        "report": scoring.report,
        "document_ids": scoring.document_ids,
        "values": list(
            MetricValue.objects.filter(scoring=scoring)
            .order_by("pk")
            .values_list("scope", "scope_key", "name", "value", "n", "ci_low", "ci_high")
        ),
        "rows": list(
            ComparisonRow.objects.filter(scoring=scoring)
            .order_by("position")
            .values_list("document__external_id", "match_status", "is_correct", "columns")
        ),
    }


def score(client, capture, monkeypatch, settings, *, kind: str, executor: str, chunk: int) -> dict:
    settings.SCORING_EXECUTOR = executor
    monkeypatch.setenv("SCORING_CHUNK_DOCUMENTS", str(chunk))
    if kind == "spans":
        run = create_run(client, kind="spans", config={"restrict_to_gt_types": True})
        documents = read_jsonl(SPANS / "spans_predictions.jsonl")
    else:
        config = (EXTRACTION / "config.yaml").read_text()
        run = create_run(client, config=config, prompts=prompts_as_run_prompts())
        documents = read_jsonl(EXTRACTION / "llm.jsonl")
    assert post_documents(client, run["id"], documents).status_code == 201
    with capture(execute=True):
        job_id = finalize(client, run["id"])["job"]["id"]
    job = Job.objects.get(pk=job_id)
    assert job.state == "succeeded", job.errors
    assert job.progress_done == job.progress_total == len(Scoring.objects.get(run_id=run["id"]).document_ids)
    assert not ScoringChunk.objects.filter(job_id=job_id).exists()  # merged, then let go
    result = stored(run["id"])
    result["report"].pop("config", None)
    return result


@pytest.mark.parametrize("chunk", [1, 2, 500])
def test_a_span_run_scored_by_a_chord_stores_what_one_process_stores(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch, settings, chunk
):
    load_span_gold(project)
    one = score(
        alice_client,
        django_capture_on_commit_callbacks,
        monkeypatch,
        settings,
        kind="spans",
        executor="process",
        chunk=500,
    )
    chord = score(
        alice_client,
        django_capture_on_commit_callbacks,
        monkeypatch,
        settings,
        kind="spans",
        executor="celery",
        chunk=chunk,
    )
    assert chord == one
    assert one["rows"] and one["values"]


@pytest.mark.parametrize("chunk", [1, 3])
def test_an_attribute_run_scored_by_a_chord_stores_what_one_process_stores(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch, settings, chunk
):
    load_extraction_gold(project)
    one = score(
        alice_client,
        django_capture_on_commit_callbacks,
        monkeypatch,
        settings,
        kind="attributes",
        executor="process",
        chunk=500,
    )
    chord = score(
        alice_client,
        django_capture_on_commit_callbacks,
        monkeypatch,
        settings,
        kind="attributes",
        executor="celery",
        chunk=chunk,
    )
    for result in (one, chord):  # the two runs differ in their ids only
        result["report"].pop("extraction_run_id")
        for *_, columns in result["rows"]:
            columns.pop("extraction_run_id")
    assert chord == one
    assert one["rows"] and one["values"]
