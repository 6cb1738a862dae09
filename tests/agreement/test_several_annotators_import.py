"""An INCEpTION export with three annotators, imported over the API: the project's gold annotator is
gold, the two others become human runs scored like any model run."""

from __future__ import annotations

import pytest

from annotations.models import GoldSpan, GoldVersion
from experiments.models import ExperimentRun, RunSource, RunStatus
from metrics.models import MetricValue, Scoring
from tests.agreement.export import ANNOTATIONS, export_zip
from tests.api.runs_support import create_run, finalize, post_documents
from tests.services.test_gold_import_fixtures import (
    media_root,  # noqa: F401 (a fixture)
    upload,
)

IMPORTS = "/api/v1/projects/letters/imports/"

pytestmark = pytest.mark.usefixtures("media_root")


def import_export(client, capture, **fields) -> dict:
    with capture(execute=True):
        response = client.post(
            IMPORTS,
            {"file": upload("export.zip", export_zip()), "format": "cas", **fields},
            format="multipart",
        )
    assert response.status_code == 202, response.data
    return client.get(f"/api/v1/jobs/{response.data['id']}/").data


def gold_spans(project) -> set[tuple]:
    version = GoldVersion.objects.get(project=project, kind="spans")
    return set(
        GoldSpan.objects.filter(gold_version=version).values_list(
            "document__external_id", "start", "end", "entity_type"
        )
    )


def spans_of(annotator: str) -> set[tuple]:
    return {
        (document_id, *span)
        for document_id, by_annotator in ANNOTATIONS.items()
        for span in by_annotator.get(annotator, [])
    }


def test_without_a_chosen_annotator_the_export_is_still_refused(
    project, alice_client, django_capture_on_commit_callbacks
):
    job = import_export(alice_client, django_capture_on_commit_callbacks)
    assert job["status"] == "failed"
    assert "alice, bob, carol" in job["errors"][0]["message"]
    assert not ExperimentRun.objects.filter(project=project).exists()


def test_the_projects_gold_annotator_is_gold_and_the_others_are_human_runs(
    project, alice_client, django_capture_on_commit_callbacks
):
    response = alice_client.patch(
        "/api/v1/projects/letters/", {"settings": {"gold_annotator": "alice"}}, format="json"
    )
    assert response.status_code == 200, response.data
    job = import_export(alice_client, django_capture_on_commit_callbacks)
    assert job["status"] == "succeeded", job["errors"]
    assert gold_spans(project) == spans_of("alice")
    humans = ExperimentRun.objects.filter(project=project, source=RunSource.HUMAN).order_by("name")
    assert [(run.name, run.status) for run in humans] == [
        ("bob", RunStatus.SCORED),
        ("carol", RunStatus.SCORED),
    ]
    # doc-3 was annotated by alice alone: the human runs have no prediction for it.
    assert sorted(humans[0].run_documents.values_list("document__external_id", flat=True)) == [
        "doc-1",
        "doc-2",
    ]


def test_the_import_may_name_the_gold_annotator_itself(
    project, alice_client, django_capture_on_commit_callbacks
):
    job = import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    assert job["status"] == "succeeded", job["errors"]
    assert set(
        ExperimentRun.objects.filter(project=project, source=RunSource.HUMAN).values_list("name", flat=True)
    ) == {"bob", "carol"}


def test_importing_the_same_export_again_records_no_second_human_run(
    project, alice_client, django_capture_on_commit_callbacks
):
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    assert ExperimentRun.objects.filter(project=project, source=RunSource.HUMAN).count() == 2


def test_human_runs_are_scored_exactly_like_model_runs(
    project, alice_client, django_capture_on_commit_callbacks
):
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    human = ExperimentRun.objects.get(project=project, source=RunSource.HUMAN, name="carol")
    # A pipeline that posts exactly carol's spans.
    run = create_run(alice_client, kind="spans", name="pipeline as carol")
    documents = [
        {
            "document_id": document_id,
            "entities": [{"start": s, "end": e, "entity_type": t} for s, e, t in by_annotator["carol"]],
        }
        for document_id, by_annotator in ANNOTATIONS.items()
        if "carol" in by_annotator
    ]
    assert post_documents(alice_client, run["id"], documents).status_code in (200, 201)
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])

    def values(run_id):
        scoring = Scoring.objects.filter(run_id=run_id).latest("number")
        return {
            (v.scope, v.scope_key, v.name): (v.value, v.n, v.ci_low, v.ci_high)
            for v in MetricValue.objects.filter(scoring=scoring)
        }

    human_values, model_values = values(human.pk), values(run["id"])
    assert human_values and human_values == model_values
    assert human_values[("overall", "", "micro.spans_exact.typed.f1")][0] < 1.0


def test_an_annotator_the_split_rules_refuse_a_run_is_a_warning_and_the_gold_is_imported(
    project, alice_client, django_capture_on_commit_callbacks
):
    # In validation only the chosen configuration may run: an annotator's run is refused.
    project.strategy, project.phase, project.chosen_config_hash = "dev_val_test", "validation", "chosen"
    project.save()
    job = import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    assert job["status"] == "succeeded", job["errors"]
    assert gold_spans(project) == spans_of("alice")
    refused = [warning["message"] for warning in job["warnings"] if warning["field"] == "annotator"]
    assert len(refused) == 2 and refused[0].startswith("annotator 'bob': no human run recorded")
    assert not ExperimentRun.objects.filter(project=project).exists()
