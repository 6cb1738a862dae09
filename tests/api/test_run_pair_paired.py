"""GET /api/v1/runs/compare/: the paired tests of `manage.py compare_runs`, under `paired`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from metrics.pipeline.extraction_evaluation import resolve_settings
from metrics.pipeline.intervals import IntervalSettings
from metrics.pipeline.run_pair_report import compare_attribute_files, compare_span_files
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

# Few resamples keep the tests quick; the settings travel as query parameters and reach the bootstrap.
SETTINGS = IntervalSettings(level=0.9, resamples=200, seed=7)
QUERY = f"resamples={SETTINGS.resamples}&seed={SETTINGS.seed}&level={SETTINGS.level}"
ATTRIBUTE_OPTIONS = {"config": {"edit_distance_match_threshold": 0.75}, "prompts": prompts_as_run_prompts()}
STATISTICS = ("level", "method", "resamples", "seed", "documents_compared", "only_in_a", "only_in_b")


def _scored(client, documents, capture, **fields) -> dict:
    run = create_run(client, **fields)
    assert post_documents(client, run["id"], documents).status_code == 201
    with capture(execute=True):
        finalize(client, run["id"])
    return run


def _write_jsonl(path: Path, documents: list[dict]) -> Path:
    path.write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")
    return path


def _better_extraction() -> list[dict]:
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    documents[0]["annotations"][1]["output_data"] = "Kenya"  # near match -> exact match
    documents[1]["annotations"][2]["output_data"] = 80  # 85 for gold 80 -> correct
    return documents


def _better_spans() -> list[dict]:
    documents = read_jsonl(SPANS / "spans_predictions.jsonl")
    documents[0]["entities"].append({"start": 64, "end": 71, "entity_type": "ID_NUMBER"})
    return documents


def _compare(client, a: dict, b: dict) -> dict:
    response = client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}&{QUERY}")
    assert response.status_code == 200, response.content
    return response.json()


def _results(paired: dict) -> list[dict]:
    if paired["kind"] == "spans":
        return list(paired["metrics"].values())
    return [result for attribute in paired["attributes"] for result in attribute["metrics"].values()]


def test_a_run_compared_with_its_twin_differs_by_nothing(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    first = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)
    twin = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)

    paired = _compare(bob_client, first, twin)["paired"]

    results = _results(paired)
    assert {attribute["attribute_id"] for attribute in paired["attributes"]} == {"101", "102", "103", "104"}
    assert any(result["delta"] is not None for result in results)
    for result in results:
        # Every metric is unchanged and its test says so, or is undefined for both runs alike (a set
        # holding a missing prediction has no accuracy).
        unchanged = (result["delta"], result["p_value"], result["p_adjusted"]) == (0, 1.0, 1.0)
        undefined = (result["a"], result["b"], result["delta"]) == (None, None, None)
        assert unchanged or undefined, result
    assert (paired["only_in_a"], paired["only_in_b"], paired["documents_compared"]) == ([], [], 2)
    assert (paired["level"], paired["resamples"], paired["seed"]) == (0.9, 200, 7)


def test_identical_span_runs_differ_by_nothing(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_span_gold(project)
    documents = read_jsonl(SPANS / "spans_predictions.jsonl")
    first = _scored(alice_client, documents, django_capture_on_commit_callbacks, kind="spans")
    twin = _scored(alice_client, documents, django_capture_on_commit_callbacks, kind="spans")

    paired = _compare(bob_client, first, twin)["paired"]

    results = _results(paired)
    assert len(results) > 30
    for result in results:
        unchanged = (result["delta"], result["p_value"], result["p_adjusted"]) == (0, 1.0, 1.0)
        undefined = (result["a"], result["b"], result["delta"]) == (None, None, None)
        assert unchanged or undefined, result


def test_the_servers_attribute_comparison_is_the_offline_commands(
    project, alice_client, bob_client, tmp_path, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    better = _better_extraction()
    a = _scored(
        alice_client,
        read_jsonl(EXTRACTION / "llm.jsonl"),
        django_capture_on_commit_callbacks,
        **ATTRIBUTE_OPTIONS,
    )
    b = _scored(alice_client, better, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)
    offline = compare_attribute_files(
        EXTRACTION / "gold.jsonl",
        EXTRACTION / "prompts.csv",
        EXTRACTION / "llm.jsonl",
        _write_jsonl(tmp_path / "better.jsonl", better),
        evaluation_settings=resolve_settings(edit_distance_match_threshold=0.75),
        settings=SETTINGS,
        sources=("llm", "llm"),
    )

    body = _compare(bob_client, a, b)

    paired = body["paired"]
    assert paired["attributes"] == offline["attributes"]
    assert {key: paired[key] for key in STATISTICS} == {key: offline[key] for key in STATISTICS}
    # The existing answer is still there beside it.
    assert body["changed_rows_total"] == 2
    # The 1002 failed extraction and the document with no line are not predicted by either run.
    assert paired["documents_compared"] == 2
    country = next(entry for entry in paired["attributes"] if entry["attribute_id"] == "102")
    assert country["metrics"]["accuracy"]["delta"] == 0.5
    assert country["p_value_methods"]["accuracy"] == "mcnemar_exact"


def test_the_servers_span_comparison_is_the_offline_commands(
    project, alice_client, bob_client, tmp_path, django_capture_on_commit_callbacks
):
    load_span_gold(project)
    better = _better_spans()
    a = _scored(
        alice_client,
        read_jsonl(SPANS / "spans_predictions.jsonl"),
        django_capture_on_commit_callbacks,
        kind="spans",
    )
    b = _scored(alice_client, better, django_capture_on_commit_callbacks, kind="spans")
    offline = compare_span_files(
        SPANS / "spans_gold.jsonl",
        SPANS / "spans_predictions.jsonl",
        _write_jsonl(tmp_path / "better.jsonl", better),
        settings=SETTINGS,
        sources=("llm", "llm"),
    )

    paired = _compare(bob_client, a, b)["paired"]

    assert paired["metrics"] == offline["metrics"]
    assert paired["p_value_methods"] == offline["p_value_methods"]
    assert {key: paired[key] for key in STATISTICS} == {key: offline[key] for key in STATISTICS}
    assert paired["metrics"]["micro.spans_overlap.type_agnostic.recall"]["delta"] > 0


def test_documents_only_one_run_predicted_are_listed_and_left_out(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_span_gold(project)
    documents = read_jsonl(SPANS / "spans_predictions.jsonl")
    a = _scored(alice_client, documents, django_capture_on_commit_callbacks, kind="spans")
    b = _scored(alice_client, documents[:2], django_capture_on_commit_callbacks, kind="spans")

    paired = _compare(bob_client, a, b)["paired"]

    assert (paired["only_in_a"], paired["only_in_b"]) == (["letter-3"], [])
    assert paired["documents_compared"] == 2


def test_a_human_annotators_run_is_the_human_ceiling(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    pipeline = _scored(
        alice_client,
        read_jsonl(EXTRACTION / "llm.jsonl"),
        django_capture_on_commit_callbacks,
        **ATTRIBUTE_OPTIONS,
    )
    annotator = _scored(
        alice_client,
        _better_extraction(),
        django_capture_on_commit_callbacks,
        name="second annotator",
        source="human",
        **ATTRIBUTE_OPTIONS,
    )

    paired = _compare(bob_client, pipeline, annotator)["paired"]

    assert (paired["a"]["source"], paired["b"]["source"]) == ("llm", "human")
    ceiling = paired["human_ceiling"]
    assert ceiling["runs"] == [{"run": "b", "label": f"run {annotator['id']} (second annotator)"}]
    assert "human ceiling" in ceiling["note"]


def test_two_pipelines_have_no_human_ceiling_and_the_defaults_are_the_offline_ones(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    a = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)
    b = _scored(alice_client, _better_extraction(), django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)

    paired = bob_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}").json()["paired"]

    assert paired["human_ceiling"] is None
    default = IntervalSettings()
    assert (paired["level"], paired["resamples"], paired["seed"]) == (
        default.level,
        default.resamples,
        default.seed,
    )


def test_the_paired_tests_can_be_left_out(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    a = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)
    b = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)

    body = bob_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}&paired=false").json()

    assert body["paired"] is None
    assert body["metrics"]


@pytest.mark.parametrize(
    "query",
    ["resamples=0", "level=1", "level=0", "seed=-1", "resamples=1000000"],
)
def test_bad_interval_settings_are_refused(
    query, project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    a = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)

    response = bob_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={a['id']}&{query}")

    assert response.status_code == 400
    assert query.split("=")[0] in response.json()


def test_an_outsider_gets_404(project, alice_client, charlie_client, django_capture_on_commit_callbacks):
    load_extraction_gold(project)
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    a = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)
    b = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)

    assert charlie_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}&{QUERY}").status_code == 404


def test_runs_on_different_gold_versions_are_refused_with_the_reason(
    project, alice_client, bob_client, tmp_path, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    a = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)
    corrected = tmp_path / "gold.jsonl"
    corrected.write_text(
        (EXTRACTION / "gold.jsonl").read_text().replace('"output_data": "80"', '"output_data": "85"')
    )
    load_extraction_gold(project, gold=corrected)
    b = _scored(alice_client, documents, django_capture_on_commit_callbacks, **ATTRIBUTE_OPTIONS)

    response = bob_client.get(f"/api/v1/runs/compare/?a={a['id']}&b={b['id']}&{QUERY}")

    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "different_gold_versions"
    assert "gold version 1" in body["detail"] and "rescore" in body["detail"]


def test_the_query_count_does_not_grow_with_the_documents(
    project, alice_client, bob_client, django_capture_on_commit_callbacks
):
    load_span_gold(project)
    documents = read_jsonl(SPANS / "spans_predictions.jsonl")
    one = [
        _scored(alice_client, documents[:1], django_capture_on_commit_callbacks, kind="spans") for _ in "ab"
    ]
    three = [_scored(alice_client, documents, django_capture_on_commit_callbacks, kind="spans") for _ in "ab"]

    with CaptureQueriesContext(connection) as on_one:
        _compare(bob_client, *one)
    with CaptureQueriesContext(connection) as on_three:
        _compare(bob_client, *three)

    assert len(on_one) == len(on_three)
