"""POST/GET /api/v1/projects/{slug}/agreement/: a job computes the agreement between the gold annotator
and the human runs; held-back documents never enter it."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError

from annotations import tasks as annotations_tasks
from annotations.importers.sources import InMemorySource
from annotations.importers.spans import load_span_corpus
from annotations.models import Document, EvaluationStrategy, Job, ProjectPhase
from annotations.signals import job_finished
from experiments.splits import split_assign_development, split_hidden_document_ids
from metrics.engine.agreement.spans import span_agreement
from metrics.pipeline.agreement_evaluation import annotated_documents
from metrics.pipeline.intervals import IntervalSettings
from metrics.services import agreement as agreement_services
from tests.agreement.export import TEXTS, export_zip
from tests.agreement.test_several_annotators_import import import_export
from tests.services.test_gold_import_fixtures import media_root  # noqa: F401 (a fixture)

AGREEMENT = "/api/v1/projects/letters/agreement/"

pytestmark = pytest.mark.usefixtures("media_root")


def compute(client, capture) -> dict:
    with capture(execute=True):
        response = client.post(AGREEMENT)
    assert response.status_code == 202, response.data
    job = client.get(response.data["job_url"]).data
    assert job["kind"] == "agreement"
    assert job["status"] == "succeeded", job["errors"]
    return job


def test_alice_computes_the_agreement_and_bob_reads_it(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    compute(alice_client, django_capture_on_commit_callbacks)
    response = bob_client.get(AGREEMENT)
    assert response.status_code == 200
    spans = response.data["spans"]
    assert spans["overall"]["annotators"] == ["alice", "bob", "carol"]
    assert spans["single_annotator_documents"] == ["doc-3"]
    # The same figures as the offline command on the export itself.
    offline = span_agreement(
        annotated_documents(load_span_corpus(InMemorySource("e.zip", export_zip())).documents),
        settings=IntervalSettings(),
    )
    for served, computed in zip(spans["pairs"], offline["pairs"], strict=True):
        for name in ("f1_exact", "f1_overlap", "f1_typed", "cohen_kappa_chars"):
            assert served[name] == pytest.approx(computed[name])
    assert spans["overall"]["krippendorff_alpha_chars"] == pytest.approx(
        offline["overall"]["krippendorff_alpha_chars"]
    )


def test_without_human_runs_the_job_fails_saying_why(
    project, alice_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(AGREEMENT)
    job = alice_client.get(response.data["job_url"]).data
    assert job["status"] == "failed"
    assert "human run" in job["errors"][0]["message"]
    assert alice_client.get(AGREEMENT).status_code == 404


def test_a_viewer_may_not_start_it_and_an_outsider_sees_nothing(project, bob_client, charlie_client):
    assert bob_client.post(AGREEMENT).status_code == 403
    assert charlie_client.get(AGREEMENT).status_code == 404
    assert charlie_client.post(AGREEMENT).status_code == 404


def test_held_back_documents_never_enter_the_agreement(
    project, alice, alice_client, bob_client, django_capture_on_commit_callbacks
):
    project.strategy, project.phase = EvaluationStrategy.DEV_VAL_TEST, ProjectPhase.DEVELOPMENT
    project.save()
    for document_id, text in TEXTS.items():
        Document.objects.create(project=project, external_id=document_id, text=text)
    split_assign_development(project=project, actor=alice, n=2, seed=3)
    hidden = set(
        Document.objects.filter(pk__in=split_hidden_document_ids(project=project)).values_list(
            "external_id", flat=True
        )
    )
    assert len(hidden) == 1
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    compute(alice_client, django_capture_on_commit_callbacks)
    body = bob_client.get(AGREEMENT).data
    assert body["documents_held_back"] == 1
    (held_back,) = hidden
    assert held_back not in json.dumps(body, default=str)
    visible_shared = {"doc-1", "doc-2"} - hidden
    assert body["spans"]["overall"]["documents"] == len(visible_shared)


def test_the_agreement_job_ends_through_the_job_system(
    project, alice, alice_client, django_capture_on_commit_callbacks
):
    finished = []

    def receiver(sender, job, **kwargs):
        finished.append((job.kind, job.state))

    job_finished.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = alice_client.post(AGREEMENT)
    finally:
        job_finished.disconnect(receiver)
    job = Job.objects.get(pk=response.data["job"]["id"])

    assert finished == [("agreement", "failed")]
    assert job.attempts == 1 and job.claim_token
    assert set(job.errors[0]) == {"message", "file", "line", "document_id", "field"}


def test_a_database_error_retries_the_agreement_job_resuming_its_claim(
    project, alice_client, django_capture_on_commit_callbacks, monkeypatch
):
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    calls = []
    real = agreement_services.project_agreement

    def flaky(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("the server closed the connection")
        return real(**kwargs)

    monkeypatch.setattr(agreement_services, "project_agreement", flaky)
    monkeypatch.setattr(annotations_tasks.time, "sleep", lambda seconds: None)

    job = compute(alice_client, django_capture_on_commit_callbacks)

    assert len(calls) == 2 and job["attempts"] == 1
