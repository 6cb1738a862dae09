"""The paired report from the engines' outputs: what the server calls with two runs' span scores or
attribute comparison rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from metrics.pipeline.extraction_evaluation import (
    compare_extraction_inputs,
    read_extraction_inputs,
    resolve_settings,
)
from metrics.pipeline.intervals import IntervalSettings
from metrics.pipeline.run_pair_report import RunSide, paired_report
from metrics.pipeline.span_evaluation import score_span_paths
from tests.pipeline.intervals.factories import (
    extraction_inputs,
    extraction_predictions,
    span_gold,
    span_predictions,
)

DOCUMENTS = 40
FAST = IntervalSettings(resamples=500)


def span_scores(tmp_path: Path, name: str, **options):
    gold = tmp_path / "gold.jsonl"
    if not gold.exists():
        span_gold(tmp_path, DOCUMENTS)
    return score_span_paths(gold, span_predictions(tmp_path, name, DOCUMENTS, **options))


def misses_phones_half_the_time(index: int, entity_type: str) -> bool:
    return not (entity_type == "PHONE" and index % 2 == 0)


def test_identical_span_runs_differ_by_nothing(tmp_path):
    a = span_scores(tmp_path, "a", keeps=misses_phones_half_the_time)
    b = span_scores(tmp_path, "b", keeps=misses_phones_half_the_time)

    report = paired_report("spans", a.scores, b.scores, settings=FAST)

    for path, result in report["metrics"].items():
        if result["delta"] is not None:
            assert result["delta"] == 0, path
            assert result["p_value"] == result["p_adjusted"] == 1.0, path
            assert result["ci_low"] == result["ci_high"] == 0, path


def test_a_clearly_better_span_run_has_a_small_p_value(tmp_path):
    weak = span_scores(tmp_path, "weak", keeps=misses_phones_half_the_time)
    strong = span_scores(tmp_path, "strong")

    report = paired_report("spans", weak.scores, strong.scores, settings=FAST)

    recall = report["metrics"]["micro.chars.all.recall"]
    assert recall["a"] < recall["b"] == 1.0
    assert recall["ci_low"] > 0 and recall["p_value"] < 0.01
    leakage = report["metrics"]["leakage.entity_missed.rate_all_documents"]
    assert leakage["delta"] == -0.5
    assert report["p_value_methods"]["leakage.entity_missed.rate_all_documents"] == "mcnemar_exact"
    assert leakage["p_value"] < 0.001  # 20 discordant documents, all one way
    phone = report["metrics"]["per_type.PHONE.chars_typed.recall"]
    assert phone["p_adjusted"] >= phone["p_value"]


def test_documents_only_one_run_predicted_are_listed_and_left_out(tmp_path):
    a = span_scores(tmp_path, "a", skip=[0, 1])
    b = span_scores(tmp_path, "b", skip=[5])

    report = paired_report(
        "spans", a.scores, b.scores, predicted_a=a.predicted_ids, predicted_b=b.predicted_ids, settings=FAST
    )

    assert report["only_in_a"] == ["doc-005"]
    assert report["only_in_b"] == ["doc-000", "doc-001"]
    assert report["documents_compared"] == DOCUMENTS - 3
    # On the documents both predicted, both runs found everything.
    assert report["metrics"]["micro.chars.all.recall"]["delta"] == 0


def test_the_same_seed_gives_the_same_report(tmp_path):
    weak = span_scores(tmp_path, "weak", keeps=misses_phones_half_the_time)
    strong = span_scores(tmp_path, "strong")

    first = paired_report(
        "spans", weak.scores, strong.scores, settings=IntervalSettings(resamples=300, seed=9)
    )
    second = paired_report(
        "spans", weak.scores, strong.scores, settings=IntervalSettings(resamples=300, seed=9)
    )

    assert first == second
    assert first["seed"] == 9 and first["resamples"] == 300


def test_a_human_run_is_called_the_human_ceiling(tmp_path):
    a = span_scores(tmp_path, "a")

    report = paired_report(
        "spans", a.scores, a.scores, settings=FAST, a=RunSide("gpt"), b=RunSide("second annotator", "human")
    )

    assert report["human_ceiling"]["runs"] == [{"run": "b", "label": "second annotator"}]
    assert report["a"] == {"label": "gpt", "source": "llm"}
    assert paired_report("spans", a.scores, a.scores, settings=FAST)["human_ceiling"] is None


def test_a_run_source_must_be_llm_or_human():
    with pytest.raises(ValueError, match="llm, human"):
        RunSide("x", "robot")


@pytest.fixture
def extraction(tmp_path: Path):
    gold, prompts = extraction_inputs(tmp_path, DOCUMENTS)

    def run(name: str, **options):
        predictions = extraction_predictions(tmp_path, name, DOCUMENTS, **options)
        inputs = read_extraction_inputs(gold=gold, prompts=prompts, predictions=predictions)
        return compare_extraction_inputs(inputs, run_id=name, settings=resolve_settings())

    return run


def test_attribute_accuracy_is_compared_by_mcnemar_and_adjusted_by_holm(extraction):
    sloppy = extraction("sloppy", wrong=lambda index, attribute_id: attribute_id == "101" and index % 2 == 0)
    careful = extraction("careful")

    report = paired_report("attributes", sloppy.rows, careful.rows, settings=FAST)

    assert [attribute["attribute_id"] for attribute in report["attributes"]] == ["102", "103", "101"]
    randomised = report["attributes"][2]
    assert randomised == {
        "attribute_id": "101",
        "label": "Randomised",
        "type": "BOOL",
        "metrics": randomised["metrics"],
        "p_value_methods": randomised["p_value_methods"],
    }
    accuracy = randomised["metrics"]["accuracy"]
    assert (accuracy["a"], accuracy["b"], accuracy["delta"]) == (0.5, 1.0, 0.5)
    assert randomised["p_value_methods"]["accuracy"] == "mcnemar_exact"
    assert accuracy["p_value"] == pytest.approx(2 * 0.5**20)
    # Holm over the three attributes' accuracies: the smallest p is multiplied by 3.
    assert accuracy["p_adjusted"] == pytest.approx(3 * accuracy["p_value"])
    country = report["attributes"][0]["metrics"]["accuracy"]
    assert country["delta"] == 0 and country["p_value"] == 1.0
    assert set(country) == {"a", "b", "delta", "ci_low", "ci_high", "p_value", "p_adjusted"}


def test_identical_attribute_runs_differ_by_nothing(extraction):
    one = extraction("one", wrong=lambda index, attribute_id: index % 3 == 0)
    other = extraction("other", wrong=lambda index, attribute_id: index % 3 == 0)

    report = paired_report("attributes", one.rows, other.rows, settings=FAST)

    for attribute in report["attributes"]:
        for metric, result in attribute["metrics"].items():
            if result["delta"] is not None:
                assert (result["delta"], result["p_value"]) == (0, 1.0), (attribute["attribute_id"], metric)


def test_a_failed_document_is_left_out_of_the_paired_test(extraction):
    gappy = extraction("gappy", skip=[4])
    full = extraction("full")

    report = paired_report("attributes", gappy.rows, full.rows, settings=FAST)

    assert report["only_in_b"] == ["trial-004"] and report["only_in_a"] == []
    assert report["documents_compared"] == DOCUMENTS - 1
    # Left out, the missing prediction does not make accuracy null for run a.
    assert report["attributes"][2]["metrics"]["accuracy"]["a"] == 1.0
