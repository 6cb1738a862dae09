"""A run scored on an older gold says so; one call rescores it on the newest, the earlier scoring stays
readable and only the numbers the change touches move; `rescore_on_new_gold` does it for every run,
within the split rules."""

from __future__ import annotations

import pytest

from annotations.models import Document, EvaluationStrategy, ProjectPhase
from experiments.models import ExperimentRun, SplitAssignment
from experiments.splits import split_assign_development
from metrics.models import MetricValue, Scoring
from tests.api.runs_support import create_run, finalize, post_documents
from tests.gold_history.support import TEXTS, V1, import_gold, predictions
from tests.services.test_gold_import_fixtures import media_root  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("media_root")

# v2: d2's PHONE becomes an ID_NUMBER, same bounds.
V2_CHANGE = {"d2": [(5, 13, "ID_NUMBER")]}


@pytest.fixture
def scored_on_v1(project, alice_client, django_capture_on_commit_callbacks) -> int:
    """A pipeline that found exactly v1's spans, scored on v1."""
    import_gold(alice_client, django_capture_on_commit_callbacks, V1)
    run = create_run(alice_client, kind="spans", name="perfect on v1")
    assert post_documents(alice_client, run["id"], predictions(V1)).status_code in (200, 201)
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])
    return run["id"]


def _values(run_id: int, number: int) -> dict[tuple[str, str, str], float | None]:
    scoring = Scoring.objects.get(run_id=run_id, number=number)
    return {(v.scope, v.scope_key, v.name): v.value for v in MetricValue.objects.filter(scoring=scoring)}


def test_a_run_scored_on_an_older_gold_says_so_wherever_its_numbers_are(
    scored_on_v1, alice_client, bob_client, django_capture_on_commit_callbacks
):
    import_gold(alice_client, django_capture_on_commit_callbacks, {"d4": [(4, 11, "PERSON_NAME")]})
    expected = {"scored_on": 1, "latest": 2, "is_latest": False, "rows_difference": 1}
    text = "scored on gold v1; v2 has 1 more span"
    metrics = bob_client.get(f"/api/v1/runs/{scored_on_v1}/metrics/").json()["gold_status"]
    values = bob_client.get(f"/api/v1/runs/{scored_on_v1}/metric-values/").json()["gold_status"]
    (scoring,) = bob_client.get(f"/api/v1/runs/{scored_on_v1}/scorings/").json()["scorings"]
    for status in (metrics, values, scoring["gold_status"]):
        assert status == {**expected, "text": text}


def test_one_call_rescores_on_the_newest_gold_and_only_the_affected_numbers_move(
    scored_on_v1, alice_client, bob_client, django_capture_on_commit_callbacks
):
    import_gold(alice_client, django_capture_on_commit_callbacks, V2_CHANGE)
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(
            f"/api/v1/runs/{scored_on_v1}/rescore/", {"gold_version": "latest"}, format="json"
        )
    assert response.status_code == 202, response.data
    assert alice_client.get(response.data["job_url"]).data["status"] == "succeeded"
    before, after = _values(scored_on_v1, 1), _values(scored_on_v1, 2)
    moved = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
    assert moved
    typed = ("typed", "strict", "ent_type")
    for scope, scope_key, name in moved:
        assert scope_key in ("PHONE", "ID_NUMBER") or any(word in name for word in typed), (
            scope,
            scope_key,
            name,
        )
    # Bounds did not change: every type-agnostic figure, and every other type's, is as it was.
    for key in [
        ("overall", "", "micro.chars.all.f1"),
        ("overall", "", "micro.spans_overlap.type_agnostic.f1"),
    ]:
        assert before[key] == after[key] == 1.0
    assert after[("overall", "", "micro.spans_exact.typed.f1")] < 1.0
    assert {k: v for k, v in before.items() if k[1] == "PERSON_NAME"} == {
        k: v for k, v in after.items() if k[1] == "PERSON_NAME"
    }
    # The earlier scoring stays readable, on its own gold version.
    earlier = bob_client.get(f"/api/v1/runs/{scored_on_v1}/metrics/?scoring=1")
    assert earlier["X-Gold-Version"] == "1"
    assert earlier.json()["micro"]["spans_exact"]["typed"]["f1"] == 1.0
    assert bob_client.get(f"/api/v1/runs/{scored_on_v1}/metrics/").json()["gold_status"]["is_latest"] is True


def test_a_rescore_names_no_older_gold_version(
    scored_on_v1, alice_client, django_capture_on_commit_callbacks
):
    import_gold(alice_client, django_capture_on_commit_callbacks, V2_CHANGE)
    response = alice_client.post(f"/api/v1/runs/{scored_on_v1}/rescore/", {"gold_version": 1}, format="json")
    assert response.status_code == 400
    assert "gold_version" in response.data


def test_with_rescore_on_new_gold_every_scored_run_follows_a_new_version(
    scored_on_v1, alice_client, django_capture_on_commit_callbacks
):
    alice_client.patch(
        "/api/v1/projects/letters/", {"settings": {"rescore_on_new_gold": True}}, format="json"
    )
    import_gold(alice_client, django_capture_on_commit_callbacks, V2_CHANGE)
    scorings = Scoring.objects.filter(run_id=scored_on_v1).order_by("number")
    assert [scoring.gold_version.number for scoring in scorings] == [1, 2]


def test_without_the_setting_a_new_version_rescores_nothing(
    scored_on_v1, alice_client, django_capture_on_commit_callbacks
):
    import_gold(alice_client, django_capture_on_commit_callbacks, V2_CHANGE)
    assert Scoring.objects.filter(run_id=scored_on_v1).count() == 1


def test_the_automatic_rescore_keeps_to_the_split_rules(
    project, alice, alice_client, django_capture_on_commit_callbacks
):
    project.strategy, project.phase = EvaluationStrategy.DEV_VAL_TEST, ProjectPhase.DEVELOPMENT
    project.settings = {**project.settings, "rescore_on_new_gold": True}
    project.save()
    for document_id in ("d1", "d2", "d3"):
        Document.objects.create(project=project, external_id=document_id, text=TEXTS[document_id])
    split_assign_development(project=project, actor=alice, n=2, seed=1)
    development = set(
        SplitAssignment.objects.filter(project=project, split="development").values_list(
            "document__external_id", flat=True
        )
    )
    import_gold(alice_client, django_capture_on_commit_callbacks, V1)
    runs = []
    for name in ("development run", "final run"):
        run = create_run(alice_client, kind="spans", name=name)
        posted = predictions({document_id: V1[document_id] for document_id in sorted(development)})
        assert post_documents(alice_client, run["id"], posted).status_code in (200, 201)
        with django_capture_on_commit_callbacks(execute=True):
            finalize(alice_client, run["id"])
        runs.append(run["id"])
    # The second stands for an accepted test result: final, never rescored.
    ExperimentRun.objects.filter(pk=runs[1]).update(is_final=True)

    import_gold(alice_client, django_capture_on_commit_callbacks, {d: [(0, 4, "OTHER_PII")] for d in V1})

    development_scorings = Scoring.objects.filter(run_id=runs[0]).order_by("number")
    assert [scoring.gold_version.number for scoring in development_scorings] == [1, 2]
    # Rescored on its own stage's documents only: the held-back one stays out.
    assert set(development_scorings.last().document_ids) == development
    assert [scoring.gold_version.number for scoring in Scoring.objects.filter(run_id=runs[1])] == [1]
