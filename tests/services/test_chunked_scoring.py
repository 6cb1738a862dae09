"""A scoring fanned out as a Celery chord (a task per chunk of documents, each reading its own documents,
and a final task that merges) stores exactly what one process computes: the same report, metric values
and comparison rows, whatever the chunk size."""

from __future__ import annotations

import json
import pickle
from datetime import timedelta

import pytest
from django.db import OperationalError, connection
from django.utils import timezone

from annotations import tasks as annotations_tasks
from annotations.models import Job
from annotations.services.jobs import jobs_dispatch
from metrics.models import ComparisonRow, MetricValue, Scoring, ScoringChunk
from metrics.services import chunked_scoring
from metrics.services.chunked_scoring import scoring_chunk_score, scoring_chunks_merge
from metrics.services.span_scoring import SpanScoringPlan
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
from tests.services.span_workers_support import scoring_of_one_process

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


def one_process(run_id: int, job: Job) -> dict:
    """`stored` of the scoring one process computes for the run, its JSON as the database keeps it."""
    one = scoring_of_one_process(run_id, job)
    return {
        "report": json.loads(json.dumps(one.report)),
        "document_ids": one.document_ids,
        "values": [
            (value.scope, value.scope_key, value.name, value.value, value.n, value.ci_low, value.ci_high)
            for value in one.metric_values
        ],
        "rows": [
            (row.document_id, row.match_status, row.is_correct, json.loads(json.dumps(row.columns)))
            for row in one.rows
        ],
    }


def score(client, capture, monkeypatch, *, kind: str, chunk: int) -> tuple[dict, dict]:
    """The scoring a chord of chunks of `chunk` documents stored, and the one one process computes."""
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
    documents = len(Scoring.objects.get(run_id=run["id"]).document_ids)
    assert job.progress_done == job.progress_total == documents
    assert job.chunks_done == job.chunks_total == -(-documents // chunk)
    assert not ScoringChunk.objects.filter(job_id=job_id).exists()  # merged, then let go
    return stored(run["id"]), one_process(run["id"], job)


@pytest.mark.parametrize("chunk", [1, 2, 500])
def test_a_span_run_scored_by_a_chord_stores_what_one_process_stores(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch, chunk
):
    load_span_gold(project)
    chord, one = score(
        alice_client, django_capture_on_commit_callbacks, monkeypatch, kind="spans", chunk=chunk
    )
    assert chord == one
    assert one["rows"] and one["values"]


@pytest.mark.parametrize("chunk", [1, 3])
def test_an_attribute_run_scored_by_a_chord_stores_what_one_process_stores(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch, chunk
):
    load_extraction_gold(project)
    chord, one = score(
        alice_client, django_capture_on_commit_callbacks, monkeypatch, kind="attributes", chunk=chunk
    )
    assert chord == one
    assert one["rows"] and one["values"]


def span_run_finalized_but_not_started(client, capture, monkeypatch, *, chunk: int):
    """A span run finalized whose scoring job is queued, its message held back: run the returned
    callbacks to send it."""
    monkeypatch.setenv("SCORING_CHUNK_DOCUMENTS", str(chunk))
    run = create_run(client, kind="spans")
    assert post_documents(client, run["id"], read_jsonl(SPANS / "spans_predictions.jsonl")).status_code == 201
    with capture(execute=False) as callbacks:
        job_id = finalize(client, run["id"])["job"]["id"]
    return run["id"], job_id, callbacks


def send(callbacks) -> None:
    for callback in callbacks:
        callback()


def test_the_chunks_of_an_earlier_claim_are_deleted_before_the_new_claim_fans_out(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch
):
    load_span_gold(project)
    run_id, job_id, callbacks = span_run_finalized_but_not_started(
        alice_client, django_capture_on_commit_callbacks, monkeypatch, chunk=1
    )
    # What a claim the dispatcher gave up for dead left behind: two chunks, stored (one past the end).
    for index in (0, 10_000):
        ScoringChunk.objects.create(
            job_id=job_id, claim_token="a" * 32, index=index, documents=1, partial=pickle.dumps(None)
        )

    send(callbacks)

    job = Job.objects.get(pk=job_id)
    assert job.state == "succeeded", job.errors
    assert job.claim_token != "a" * 32
    scoring = Scoring.objects.get(run_id=run_id)
    assert job.progress_done == job.progress_total == len(scoring.document_ids)  # no chunk counted twice
    assert not ScoringChunk.objects.filter(job_id=job_id).exists()


def test_a_chunk_task_or_a_merge_of_a_claim_that_is_not_the_jobs_writes_nothing(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch
):
    load_span_gold(project)
    run_id, job_id, callbacks = span_run_finalized_but_not_started(
        alice_client, django_capture_on_commit_callbacks, monkeypatch, chunk=1
    )
    Job.objects.filter(pk=job_id).update(state="running", claim_token="b" * 32)
    document_id = read_jsonl(SPANS / "spans_predictions.jsonl")[0]["document_id"]
    ScoringChunk.objects.create(
        job_id=job_id, claim_token="a" * 32, index=0, document_ids=[document_id], documents=1, partial=None
    )

    stored = scoring_chunk_score(job_id=job_id, resume_token="a" * 32, index=0, allowed_types=None)
    state = scoring_chunks_merge(job_id=job_id, resume_token="a" * 32)

    assert (stored, state) == (0, "running")
    assert ScoringChunk.objects.get(job_id=job_id).partial is None
    assert not Scoring.objects.filter(run_id=run_id).exists()
    assert Job.objects.get(pk=job_id).progress_done == 0


def test_a_chunk_task_that_meets_a_database_error_is_retried_and_the_job_stores_one_scoring(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch
):
    load_span_gold(project)
    run_id, job_id, callbacks = span_run_finalized_but_not_started(
        alice_client, django_capture_on_commit_callbacks, monkeypatch, chunk=2
    )
    failures = iter([OperationalError("the server closed the connection unexpectedly")])
    real = SpanScoringPlan.chunk_score

    def flaky(plan, **kwargs):
        error = next(failures, None)
        if error is not None:
            raise error
        return real(plan, **kwargs)

    monkeypatch.setattr(SpanScoringPlan, "chunk_score", flaky)
    monkeypatch.setattr(annotations_tasks.time, "sleep", lambda seconds: None)

    send(callbacks)

    job = Job.objects.get(pk=job_id)
    assert job.state == "succeeded", job.errors
    assert next(failures, None) is None
    scoring = Scoring.objects.get(run_id=run_id)
    assert job.progress_done == job.progress_total == len(scoring.document_ids)
    assert ComparisonRow.objects.filter(scoring=scoring).count() == len(
        set(ComparisonRow.objects.filter(scoring=scoring).values_list("position", flat=True))
    )


def test_a_chunk_task_that_meets_bad_input_fails_the_job_and_its_run_and_leaves_no_chunk(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch
):
    load_span_gold(project)
    run_id, job_id, callbacks = span_run_finalized_but_not_started(
        alice_client, django_capture_on_commit_callbacks, monkeypatch, chunk=1
    )
    calls = iter(range(100))
    real = SpanScoringPlan.chunk_score

    def bad_second_chunk(plan, **kwargs):
        if next(calls) == 1:
            raise ValueError("span 3 of document 'x' ends past its text")
        return real(plan, **kwargs)

    monkeypatch.setattr(SpanScoringPlan, "chunk_score", bad_second_chunk)

    send(callbacks)

    job = Job.objects.get(pk=job_id)
    assert job.state == "failed"
    assert [error["message"] for error in job.errors] == ["span 3 of document 'x' ends past its text"]
    assert alice_client.get(f"/api/v1/runs/{run_id}/").json()["status"] == "failed"
    assert not ScoringChunk.objects.filter(job_id=job_id).exists()
    assert not Scoring.objects.filter(run_id=run_id).exists()


def test_a_silent_fanned_out_job_is_resumed_by_the_dispatcher_which_sends_its_pending_chunks_alone(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch, settings
):
    """The chord of a claim whose worker died: chunk 0 stored, the other tasks lost. The dispatcher keeps
    the claim and chunk 0, sends only the pending chunks, and the job stores what one process stores."""
    load_span_gold(project)
    run_id, job_id, callbacks = span_run_finalized_but_not_started(
        alice_client, django_capture_on_commit_callbacks, monkeypatch, chunk=1
    )
    lost = []
    monkeypatch.setattr(
        chunked_scoring.CeleryChord, "dispatch", lambda self, chunks, merge: lost.append(chunks)
    )
    send(callbacks)
    monkeypatch.undo()
    job = Job.objects.get(pk=job_id)
    chunks = ScoringChunk.objects.filter(job_id=job_id)
    assert job.state == "running" and len(lost[0]) == chunks.count() > 2
    assert scoring_chunk_score(job_id=job_id, resume_token=job.claim_token, index=0, allowed_types=None) == 1
    scored = []
    real = SpanScoringPlan.chunk_score
    monkeypatch.setattr(
        SpanScoringPlan,
        "chunk_score",
        lambda plan, **kwargs: scored.append(kwargs["document_ids"]) or real(plan, **kwargs),
    )

    later = job.heartbeat_at + timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    with django_capture_on_commit_callbacks(execute=True):
        report = jobs_dispatch(now=later)

    assert (report.resumed, report.requeued) == (1, 0)
    resumed = Job.objects.get(pk=job_id)
    assert resumed.state == "succeeded", resumed.errors
    assert (resumed.claim_token, resumed.attempts) == (job.claim_token, 2)
    assert not ScoringChunk.objects.filter(job_id=job_id).exists()  # merged, then let go
    first_document = lost[0][0]  # chunk 0's documents: read from its row, scored before the resume
    assert first_document.args[0] == 0
    assert len(scored) == len(lost[0]) - 1 == len({tuple(ids) for ids in scored})  # each other chunk once
    assert (
        resumed.progress_done
        == resumed.progress_total
        == len(Scoring.objects.get(run_id=run_id).document_ids)
    )
    one = scoring_of_one_process(run_id, resumed)
    again = stored(run_id)
    assert again["report"] == one.report
    assert again["values"] == [
        (value.scope, value.scope_key, value.name, value.value, value.n, value.ci_low, value.ci_high)
        for value in one.metric_values
    ]
    assert [(document, status, columns) for document, status, _, columns in again["rows"]] == [
        (row.document_id, row.match_status, row.columns) for row in one.rows
    ]


def test_a_silent_job_that_did_not_fan_out_is_queued_again(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch, settings
):
    load_span_gold(project)
    run_id, job_id, callbacks = span_run_finalized_but_not_started(
        alice_client, django_capture_on_commit_callbacks, monkeypatch, chunk=1
    )
    silent_since = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    Job.objects.filter(pk=job_id).update(
        state="running", claim_token="a" * 32, attempts=1, heartbeat_at=silent_since
    )

    with django_capture_on_commit_callbacks(execute=True):
        report = jobs_dispatch()

    assert (report.resumed, report.requeued) == (0, 1)
    job = Job.objects.get(pk=job_id)
    assert job.state == "succeeded" and job.claim_token != "a" * 32 and job.attempts == 2


@pytest.mark.postgresql
def test_rows_not_written_when_their_tasks_were_lost_are_written_on_resume_and_no_chunk_is_scored_again(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch, settings
):
    """On PostgreSQL the chunks' rows are written by a second wave of tasks into a scoring no reader
    sees yet. That wave lost: the job stays running with its scoring hidden; the dispatcher sends the
    writes again, and the merge completes the scoring one process computes."""
    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (COPY): run the suite through scripts/test")
    load_span_gold(project)
    run_id, job_id, callbacks = span_run_finalized_but_not_started(
        alice_client, django_capture_on_commit_callbacks, monkeypatch, chunk=1
    )
    real = chunked_scoring.CeleryChord.dispatch
    lost = []

    def losing_the_writes(self, tasks, then):
        if then.task == "metrics.merge_chunks" and not lost:
            lost.append(tasks)
            return None
        return real(self, tasks, then)

    monkeypatch.setattr(chunked_scoring.CeleryChord, "dispatch", losing_the_writes)
    send(callbacks)
    job = Job.objects.get(pk=job_id)
    hidden = Scoring.objects.get(job_id=job_id)
    assert job.state == "running" and len(lost[0]) > 2
    assert not hidden.is_complete and not ComparisonRow.objects.filter(scoring=hidden).exists()
    # The merge did not wait for the rows: the hidden scoring holds the metrics already.
    assert hidden.report and MetricValue.objects.filter(scoring=hidden).exists()
    scored = []
    real_score = SpanScoringPlan.chunk_score
    monkeypatch.setattr(
        SpanScoringPlan,
        "chunk_score",
        lambda plan, **kwargs: scored.append(kwargs) or real_score(plan, **kwargs),
    )

    later = job.heartbeat_at + timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_dispatch(now=later).resumed == 1

    resumed = Job.objects.get(pk=job_id)
    assert resumed.state == "succeeded", resumed.errors
    assert (resumed.claim_token, resumed.attempts, scored) == (job.claim_token, 2, [])
    scoring = Scoring.objects.get(run_id=run_id)
    assert scoring.pk == hidden.pk and scoring.is_complete
    one = scoring_of_one_process(run_id, resumed)
    again = stored(run_id)
    assert again["report"] == one.report
    assert [(document, status, columns) for document, status, _, columns in again["rows"]] == [
        (row.document_id, row.match_status, row.columns) for row in one.rows
    ]
    by_id = ComparisonRow.objects.filter(scoring=scoring).order_by("id")
    assert list(by_id.values_list("position", flat=True)) == list(range(len(one.rows)))  # as readers page
