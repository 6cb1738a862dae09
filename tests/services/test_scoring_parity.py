"""Same numbers online and offline: data posted through the API and scored by the job give exactly
the report the offline commands write for the same files (apart from paths in `config`)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.management import call_command

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


def served_report(body: dict) -> dict:
    """The stored report of a /metrics/ answer: the server adds what the offline file cannot know (the
    gold status of the scoring and the human ceiling, docs/agreement.md) beside it."""
    return {key: value for key, value in body.items() if key not in ("gold_status", "human_ceiling")}


def _score_online(client, run_id: int, documents: list[dict], capture) -> None:
    assert post_documents(client, run_id, documents).status_code == 201
    with capture(execute=True):
        finalize(client, run_id)


def test_an_attribute_run_scores_exactly_as_the_offline_command(
    project, alice_client, tmp_path, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    config = (EXTRACTION / "config.yaml").read_text()
    run = create_run(alice_client, config=config, prompts=prompts_as_run_prompts())
    _score_online(
        alice_client, run["id"], read_jsonl(EXTRACTION / "llm.jsonl"), django_capture_on_commit_callbacks
    )

    offline = tmp_path / "offline"
    call_command(
        "evaluate_extraction",
        gold=EXTRACTION / "gold.jsonl",
        prompts=EXTRACTION / "prompts.csv",
        predictions=EXTRACTION / "llm.jsonl",
        config=EXTRACTION / "config.yaml",
        output_dir=offline,
        run_id=str(run["id"]),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )

    online = served_report(alice_client.get(f"/api/v1/runs/{run['id']}/metrics/").json())
    assert online == json.loads((offline / "metrics.json").read_text())
    # The downloads are the offline files, byte for byte, where the content does not name paths.
    archive = zipfile.ZipFile(
        io.BytesIO(alice_client.get(f"/api/v1/runs/{run['id']}/artefacts.zip").getvalue())
    )
    for name in ("metrics.json", "metrics.csv", "goldstandard_llm_comparison.csv", "prompts_used.csv"):
        assert archive.read(name) == (offline / name).read_bytes(), name
    online_metadata = json.loads(archive.read("extraction_metadata.json"))
    offline_metadata = json.loads((offline / "extraction_metadata.json").read_text())
    assert online_metadata == offline_metadata
    online_annotations = json.loads(archive.read("llm_annotations.json"))
    offline_annotations = json.loads((offline / "llm_annotations.json").read_text())
    assert online_annotations["documents"] == offline_annotations["documents"]


def test_a_span_run_scores_exactly_as_the_offline_command(
    project, alice_client, tmp_path, django_capture_on_commit_callbacks
):
    load_span_gold(project)
    run = create_run(alice_client, kind="spans")
    _score_online(
        alice_client,
        run["id"],
        read_jsonl(SPANS / "spans_predictions.jsonl"),
        django_capture_on_commit_callbacks,
    )

    results = tmp_path / "results.json"
    call_command(
        "evaluate_spans",
        gold=str(SPANS / "spans_gold.jsonl"),
        predictions=str(SPANS / "spans_predictions.jsonl"),
        output=str(results),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )

    online = served_report(alice_client.get(f"/api/v1/runs/{run['id']}/metrics/").json())
    offline = json.loads(results.read_text())
    online.pop("config")
    offline.pop("config")
    assert online == offline
    assert online["micro"]["chars"]["all"]["tp"] > 0


def test_span_scoring_with_restrict_to_gt_types_matches_offline(
    project, alice_client, tmp_path, django_capture_on_commit_callbacks
):
    load_span_gold(project)
    run = create_run(alice_client, kind="spans", config={"restrict_to_gt_types": True})
    documents = read_jsonl(SPANS / "spans_predictions.jsonl")
    _score_online(alice_client, run["id"], documents, django_capture_on_commit_callbacks)

    results = tmp_path / "results.json"
    call_command(
        "evaluate_spans",
        gold=str(SPANS / "spans_gold.jsonl"),
        predictions=str(SPANS / "spans_predictions.jsonl"),
        output=str(results),
        restrict_to_gt_types=True,
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )

    online = served_report(alice_client.get(f"/api/v1/runs/{run['id']}/metrics/").json())
    offline = json.loads(results.read_text())
    assert online["restricted_predictions_dropped"] == offline["restricted_predictions_dropped"] > 0
    online.pop("config")
    offline.pop("config")
    assert online == offline


def test_chunked_scoring_gives_the_numbers_of_one_chunk(
    project, alice_client, django_capture_on_commit_callbacks, settings
):
    from annotations.models import Job
    from metrics.models import Scoring
    from metrics.services.chunked_scoring import scoring_run

    load_span_gold(project)
    run = create_run(alice_client, kind="spans")
    _score_online(
        alice_client,
        run["id"],
        read_jsonl(SPANS / "spans_predictions.jsonl"),
        django_capture_on_commit_callbacks,
    )
    whole = Scoring.objects.get(run_id=run["id"]).report

    with django_capture_on_commit_callbacks(execute=False):
        response = alice_client.post(f"/api/v1/runs/{run['id']}/rescore/")
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert scoring_run(job_id=job.pk, chunk_documents=1) == "succeeded"

    chunked = Scoring.objects.get(run_id=run["id"], number=2).report
    assert chunked == whole


def test_an_attribute_scoring_job_notes_what_the_offline_log_notes(
    project, alice_client, tmp_path, django_capture_on_commit_callbacks
):
    """One builder of an extraction evaluation: the job's warnings carry the notes of evaluation.log
    (an attribute without a prompt, a gold document without gold) in the same words."""
    from annotations.models import Job

    load_extraction_gold(project)
    run = create_run(
        alice_client, config=(EXTRACTION / "config.yaml").read_text(), prompts=prompts_as_run_prompts()
    )
    assert post_documents(alice_client, run["id"], read_jsonl(EXTRACTION / "llm.jsonl")).status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        job_id = finalize(alice_client, run["id"])["job"]["id"]

    offline = tmp_path / "offline"
    call_command(
        "evaluate_extraction",
        gold=EXTRACTION / "gold.jsonl",
        prompts=EXTRACTION / "prompts.csv",
        predictions=EXTRACTION / "llm.jsonl",
        config=EXTRACTION / "config.yaml",
        output_dir=offline,
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    log = (offline / "evaluation.log").read_text().splitlines()
    notes = [
        "1 attribute(s) have no prompt and are not scored: '105'",
        "1 gold document(s) have no gold annotations and are not scored: '1004'",
    ]
    assert [f"WARNING {note}" for note in notes] == [
        line for line in log if line.removeprefix("WARNING ") in notes
    ]
    messages = [warning["message"] for warning in Job.objects.get(pk=job_id).warnings]
    assert [message for message in messages if message in notes] == notes
