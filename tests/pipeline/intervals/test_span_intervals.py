"""Confidence intervals in results.json: beside each headline metric as `<metric>_ci`, reproducible
under a seed, recorded in `config.intervals`, off with 0 resamples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metrics.engine.spans.score import TYPE_STORED_FIELDS
from metrics.engine.spans.types import DocumentSpans, Span
from metrics.engine.uncertainty.span_metrics import span_document_counts, span_metric_definitions
from metrics.pipeline.intervals import (
    IntervalSettings,
    interval_count_table,
    span_count_table,
    span_table_intervals,
)
from metrics.pipeline.span_evaluation import evaluate_span_paths
from tests.engine.spans.oracle import document_count_table, score_document
from tests.engine.spans.results import evaluate_documents, score_span_batches
from tests.engine.uncertainty.test_span_metrics import documents, results_value
from tests.pipeline.intervals.factories import span_gold, span_predictions

DOCUMENTS = 30


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    return span_gold(tmp_path, DOCUMENTS)


@pytest.fixture
def predictions(tmp_path: Path) -> Path:
    # Names always found; the phone missed in every third document, the date in every fourth.
    def keeps(index: int, entity_type: str) -> bool:
        return not (entity_type == "PHONE" and index % 3 == 0) and not (
            entity_type == "DATE_OF_BIRTH" and index % 4 == 0
        )

    return span_predictions(tmp_path, "pipeline", DOCUMENTS, keeps=keeps)


def at(results: dict, path: str):
    node = results
    for key in path.split("."):
        node = node[key]
    return node


HEADLINE_PATHS = [
    f"micro.{family}.{measure}"
    for family in ("chars.all", "chars.scored", "nervaluate.strict", "nervaluate.partial")
    for measure in ("precision", "recall", "f1")
] + [
    "micro.spans_overlap.type_agnostic.recall",
    "per_type.PHONE.chars_typed.recall",
    "per_type.PHONE.char_recall",
]


def test_every_headline_metric_has_its_interval_beside_it(gold, predictions):
    results = evaluate_span_paths(gold, predictions)

    for path in HEADLINE_PATHS:
        interval = at(results, path + "_ci")
        assert interval["method"] == "cluster_bootstrap_percentile", path
        assert (interval["level"], interval["resamples"], interval["seed"]) == (0.95, 2000, 20260808)
        assert interval["low"] <= at(results, path) <= interval["high"], path


def test_leakage_rates_get_exact_clopper_pearson_intervals(gold, predictions):
    results = evaluate_span_paths(gold, predictions)

    leakage = results["leakage"]["entity_missed"]
    interval = leakage["rate_all_documents_ci"]
    assert interval["method"] == "clopper_pearson"
    assert interval["resamples"] is None and interval["seed"] is None
    assert interval["low"] < leakage["rate_all_documents"] < interval["high"]
    assert leakage["rate_documents_with_gold_ci"]["method"] == "clopper_pearson"


def test_the_settings_are_recorded_in_the_config(gold, predictions):
    results = evaluate_span_paths(
        gold, predictions, intervals=IntervalSettings(level=0.9, resamples=500, seed=7)
    )

    assert results["config"]["intervals"] == {
        "level": 0.9,
        "resamples": 500,
        "seed": 7,
        "method": "cluster_bootstrap_percentile",
        "leakage_method": "clopper_pearson",
    }
    assert results["micro"]["chars"]["all"]["f1_ci"]["resamples"] == 500


def test_the_same_input_and_seed_give_the_same_intervals(gold, predictions):
    settings = IntervalSettings(resamples=300, seed=11)
    first = evaluate_span_paths(gold, predictions, intervals=settings)
    second = evaluate_span_paths(gold, predictions, intervals=settings)
    other_seed = evaluate_span_paths(gold, predictions, intervals=IntervalSettings(resamples=300, seed=12))

    assert first["micro"] == second["micro"]
    assert first["per_type"] == second["per_type"]
    assert first["micro"]["chars"]["all"]["recall_ci"] != other_seed["micro"]["chars"]["all"]["recall_ci"]


def test_a_higher_level_gives_a_wider_interval(gold, predictions):
    narrow = evaluate_span_paths(gold, predictions, intervals=IntervalSettings(level=0.8, resamples=500))
    wide = evaluate_span_paths(gold, predictions, intervals=IntervalSettings(level=0.99, resamples=500))

    def width(results: dict) -> float:
        interval = results["micro"]["chars"]["all"]["recall_ci"]
        return interval["high"] - interval["low"]

    assert width(wide) > width(narrow)


def test_zero_resamples_turns_intervals_off(gold, predictions):
    results = evaluate_span_paths(gold, predictions, intervals=IntervalSettings(resamples=0))

    assert "f1_ci" not in results["micro"]["chars"]["all"]
    assert "rate_all_documents_ci" not in results["leakage"]["any_char"]
    assert results["config"]["intervals"]["resamples"] == 0
    assert results["config"]["intervals"]["method"] is None


def test_a_null_metric_has_a_null_interval(gold, tmp_path):
    nothing = span_predictions(tmp_path, "silent", DOCUMENTS, keeps=lambda index, entity_type: False)

    results = evaluate_span_paths(gold, nothing)

    assert results["micro"]["chars"]["all"]["precision"] is None
    assert results["micro"]["chars"]["all"]["precision_ci"] is None
    assert results["micro"]["chars"]["all"]["recall_ci"] == {
        "low": 0.0,
        "high": 0.0,
        "level": 0.95,
        "method": "cluster_bootstrap_percentile",
        "resamples": 2000,
        "seed": 20260808,
    }


def test_the_phase_timings_include_the_intervals(gold, predictions):
    phases: dict[str, float] = {}

    evaluate_span_paths(gold, predictions, phase_seconds=phases)

    assert set(phases) == {"load and score", "aggregate", "intervals"}
    assert all(seconds >= 0 for seconds in phases.values())


def test_the_count_table_matches_the_engines_and_adds_what_char_recall_needs():
    text = "Patient: Max Mustermann, geb. 01.02.1980, Tel. 0761 123456, Station 4B"
    name, birth, phone = Span(9, 23, "PERSON_NAME"), Span(30, 40, "DATE_OF_BIRTH"), Span(47, 58, "PHONE")
    documents = [
        DocumentSpans(
            "d2", text, [name, birth, phone], [Span(13, 23, "PERSON_NAME"), Span(30, 40, "OTHER_DATE")]
        ),
        DocumentSpans("d1", text, [name, birth, phone], [name, birth, phone]),
        DocumentSpans("d3", text, [name, phone], [Span(0, 7, "OTHER_PII"), Span(47, 52, "PHONE")]),
        DocumentSpans("d4", text, [], [Span(60, 67, "ORGANIZATION")]),
        DocumentSpans("d5", "", [], []),
    ]
    scores = [score_document(document) for document in documents]

    counts = span_count_table(score_span_batches(documents))
    engine = document_count_table(scores)

    order = [list(engine["document_id"]).index(document_id) for document_id in counts.document_ids]
    for name_, column in counts.columns.items():
        if name_ in engine:
            assert np.array_equal(column, engine[name_][order]), name_
    covered = counts.columns["chars_typed.DATE_OF_BIRTH.covered_by_any"]
    covered_index = TYPE_STORED_FIELDS.index("chars_typed.covered_by_any")
    expected = [
        score.type_rows().get("DATE_OF_BIRTH", {covered_index: 0})[covered_index]
        for score in sorted(scores, key=lambda s: s.document_id)
    ]
    assert covered.tolist() == expected == [10, 10, 0, 0, 0]


def test_the_count_table_is_built_only_when_intervals_are_asked_for_and_a_document_is_scored():
    scores = score_span_batches(documents())

    assert interval_count_table(scores, IntervalSettings(resamples=0)) is None
    assert interval_count_table(scores.take([]), IntervalSettings(resamples=10)) is None
    table = interval_count_table(scores, IntervalSettings(resamples=10))
    assert table is not None and table.document_ids == span_count_table(scores).document_ids


def test_intervals_bootstrap_ratios_and_give_leakage_rates_exact_intervals():
    docs = documents()
    counts = span_document_counts(document_count_table(score_document(doc) for doc in docs))
    definitions = span_metric_definitions(counts.columns)
    intervals = span_table_intervals(counts, IntervalSettings(resamples=300, seed=4))
    assert set(intervals) == set(definitions)
    # d2, d3 and d5 miss part of a gold span: 3 of 5 documents, 3 of the 4 documents with gold.
    any_char = intervals["leakage.any_char.rate_all_documents"]
    assert any_char.method == "clopper_pearson"
    assert any_char.low == pytest.approx(0.146633, abs=1e-6)
    assert intervals["micro.chars.all.f1"].method == "cluster_bootstrap_percentile"
    assert intervals["micro.chars.all.f1"].as_dict()["resamples"] == 300
    assert intervals["micro.chars.all.f1"].low <= results_value(
        evaluate_documents(docs), "micro.chars.all.f1"
    )
