"""The human ceiling beside a model's numbers: in the run's metrics and the comparison."""

from __future__ import annotations

import pytest

from experiments.models import ExperimentRun, RunSource
from metrics.models import HumanCeilingPair, MetricValue, Scoring
from metrics.selectors import scoring_get
from metrics.services import human_ceiling as ceiling_services
from tests.agreement.test_several_annotators_import import import_export
from tests.api.runs_support import create_run, finalize, post_documents
from tests.services.test_gold_import_fixtures import media_root  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("media_root")


@pytest.fixture
def silent_pipeline(project, alice_client, django_capture_on_commit_callbacks) -> int:
    """The export imported with alice as gold (bob and carol are human runs), and a pipeline that
    found nothing in doc-1 and doc-2: well below the humans."""
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    run = create_run(alice_client, kind="spans", name="silent")
    documents = [{"document_id": document_id, "entities": []} for document_id in ("doc-1", "doc-2")]
    assert post_documents(alice_client, run["id"], documents).status_code in (200, 201)
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])
    return run["id"]


def _entry(ceiling, name="micro.chars.all.f1"):
    return next(entry for entry in ceiling["metrics"] if entry["name"] == name)


def test_the_run_metrics_carry_each_annotators_figure_and_a_paired_test(silent_pipeline, bob_client):
    body = bob_client.get(f"/api/v1/runs/{silent_pipeline}/metrics/").json()
    ceiling = body["human_ceiling"]
    assert [human["name"] for human in ceiling["human_runs"]] == ["bob", "carol"]
    entry = _entry(ceiling)
    assert entry["model"]["value"] == body["micro"]["chars"]["all"]["f1"] == 0.0
    bob = next(annotator for annotator in entry["annotators"] if annotator["name"] == "bob")
    human = ExperimentRun.objects.get(source=RunSource.HUMAN, name="bob")
    stored = MetricValue.objects.get(scoring=Scoring.objects.get(run=human), name="micro.chars.all.f1")
    assert (bob["value"], bob["ci_low"], bob["ci_high"]) == (stored.value, stored.ci_low, stored.ci_high)
    # bob found 21 of alice's 30 characters in doc-1 and doc-2 and marked 26: F1 = 42 / 56. Over the
    # whole gold he also missed doc-3 (4 characters), which he never annotated: 42 / 60 as scored.
    assert stored.value == pytest.approx(42 / 60)
    assert bob["paired"]["human"] == pytest.approx(42 / 56)
    assert bob["paired"]["delta"] == pytest.approx(0.0 - 42 / 56)
    assert bob["paired"]["documents_compared"] == 2
    assert bob["model_below"] is True
    assert entry["text"].startswith("F1 (characters) 0.00") and "; bob " in entry["text"]


def test_the_comparison_carries_the_ceiling_of_both_runs(silent_pipeline, bob_client):
    human = ExperimentRun.objects.get(source=RunSource.HUMAN, name="carol")
    body = bob_client.get(f"/api/v1/runs/compare/?a={human.pk}&b={silent_pipeline}&resamples=100").json()
    assert [h["name"] for h in body["human_ceiling"]["b"]["human_runs"]] == ["bob", "carol"]
    assert [h["name"] for h in body["human_ceiling"]["a"]["human_runs"]] == ["bob"]


def test_without_human_runs_there_is_no_ceiling(project, alice_client, django_capture_on_commit_callbacks):
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    ExperimentRun.objects.filter(source=RunSource.HUMAN).delete()
    run = create_run(alice_client, kind="spans", name="alone")
    post_documents(alice_client, run["id"], [{"document_id": "doc-1", "entities": []}])
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])
    model_run = ExperimentRun.objects.get(pk=run["id"])
    assert ceiling_services.human_ceiling(model_run, scoring_get(run=model_run)) is None
    assert alice_client.get(f"/api/v1/runs/{run['id']}/metrics/").json()["human_ceiling"] is None


def test_the_paired_tests_are_stored_when_the_run_is_scored(silent_pipeline):
    scoring = Scoring.objects.get(run_id=silent_pipeline)
    pairs = HumanCeilingPair.objects.filter(scoring=scoring)
    assert sorted(pair.human_scoring.run.name for pair in pairs) == ["bob", "carol"]


def test_reading_the_ceiling_computes_no_paired_test(silent_pipeline, bob_client, monkeypatch):
    before = bob_client.get(f"/api/v1/runs/{silent_pipeline}/metrics/").json()["human_ceiling"]

    def refuse(**kwargs):
        raise AssertionError("a paired test was computed on a read")

    monkeypatch.setattr(ceiling_services, "scorings_paired_report", refuse)

    assert bob_client.get(f"/api/v1/runs/{silent_pipeline}/metrics/").json()["human_ceiling"] == before


def test_a_human_run_scored_later_stores_its_pair_with_the_models_scoring(
    silent_pipeline, alice_client, django_capture_on_commit_callbacks
):
    human = ExperimentRun.objects.get(source=RunSource.HUMAN, name="bob")
    with django_capture_on_commit_callbacks(execute=True):
        assert alice_client.post(f"/api/v1/runs/{human.pk}/rescore/").status_code == 202
    rescored = Scoring.objects.filter(run=human).order_by("-number").first()
    assert rescored.number == 2
    assert HumanCeilingPair.objects.filter(
        scoring=Scoring.objects.get(run_id=silent_pipeline), human_scoring=rescored
    ).exists()
