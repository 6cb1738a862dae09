"""Attribute metrics for intervals and comparisons: the same numbers as metrics.json, from the
comparison rows, with the seed's missing-prediction rule and the source strata."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.engine.attributes.metrics import metric_columns
from metrics.engine.attributes.types import AttributeType, EvaluationSettings
from metrics.engine.uncertainty.attribute_metrics import (
    attribute_document_counts,
    attribute_metric_definitions,
    by_attribute,
    counts_of_metric_columns,
)
from metrics.engine.uncertainty.bootstrap import IntervalSettings
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.paired import compare_runs
from tests.engine.attributes.test_support import compare_documents, evaluate, gold, predicted, result_of, spec

TYPES = {
    "smoker": AttributeType.BOOL,
    "site": AttributeType.STRING,
    "age": AttributeType.INTEGER,
    "notes": AttributeType.LIST,
}
SITES = ["Leeds", "York", "Hull", "Bath"]


def study(seed: int, n_documents: int = 40, missing: bool = False):
    """Gold and predictions for a small extraction run; `missing` drops one prediction of `site`."""
    rng = np.random.default_rng(seed)
    attributes = [spec(attribute_id, attribute_type) for attribute_id, attribute_type in TYPES.items()]
    documents, predictions = [], []
    for i in range(n_documents):
        site, age = SITES[rng.integers(4)], int(rng.integers(20, 90))
        text = f"Seen in {site}, aged {age}." if rng.random() < 0.7 else "No details."
        documents.append(
            gold(
                f"doc-{i:02d}",
                {"smoker": bool(rng.random() < 0.4), "site": site, "age": age, "notes": []},
                text=text,
            )
        )
        guess_site = site if rng.random() < 0.7 else rng.choice(["leeds", "Yorkk", "Bath"])
        values = {
            "smoker": bool(rng.random() < 0.4),
            "site": str(guess_site),
            "age": age + int(rng.integers(-2, 3)),
            "notes": [],
        }
        if missing and i == 3:
            del values["site"]
        predictions.append(predicted(f"doc-{i:02d}", values, context=text))
    return attributes, documents, predictions


def rows_of(attributes, documents, predictions):
    rows, _ = compare_documents(
        run_id="run-1",
        attributes=attributes,
        gold_documents=documents,
        predictions={prediction.document_id: prediction for prediction in predictions},
        settings=EvaluationSettings(),
    )
    return rows


@pytest.mark.parametrize("missing", [False, True])
def test_every_metric_equals_the_value_metrics_json_reports(missing):
    attributes, documents, predictions = study(seed=1, missing=missing)
    evaluation = evaluate(attributes, documents, predictions)
    counts = attribute_document_counts(rows_of(attributes, documents, predictions))
    totals = counts.totals()
    definitions = attribute_metric_definitions(TYPES)
    for (attribute_id, name), definition in definitions.items():
        ours = definition.measure(totals)[0]
        theirs = result_of(evaluation, attribute_id).metrics[name]
        if theirs is None:
            assert math.isnan(ours), (attribute_id, name)
        else:
            assert ours == pytest.approx(theirs, abs=1e-12), (attribute_id, name)
    names = {name for _, name in definitions}
    assert {
        "accuracy_given_good_source",
        "edit_distance_match_rate_given_bad_source",
        "f1_score_given_prediction",
        "mean_absolute_error",
    } <= names
    assert not any(attribute_id == "notes" for attribute_id, _ in definitions)


def test_documents_without_scored_rows_are_still_resampled():
    attributes, documents, predictions = study(seed=3, n_documents=5)
    counts = attribute_document_counts(rows_of(attributes, documents, predictions), document_ids=["no-gold"])
    assert counts.document_ids[-1] == "no-gold"
    assert counts.column("smoker.all.rows").tolist() == [1, 1, 1, 1, 1, 0]


def test_accuracy_comparisons_use_mcnemar_and_holm_across_attributes():
    attributes, documents, predictions = study(seed=4)
    _, _, other_predictions = study(seed=5)
    a = attribute_document_counts(rows_of(attributes, documents, predictions))
    b = attribute_document_counts(rows_of(attributes, documents, other_predictions))
    definitions = attribute_metric_definitions(TYPES)
    comparison = compare_runs(a, b, definitions, IntervalSettings(resamples=400))
    methods = comparison.as_dict()["p_value_methods"]
    assert methods[("smoker", "accuracy")] == "mcnemar_exact"
    assert methods[("site", "accuracy_given_prediction")] == "paired_bootstrap"
    nested = by_attribute(comparison.metrics)
    assert set(nested) == {"smoker", "site", "age"}
    accuracies = [nested[attribute_id]["accuracy"] for attribute_id in ("smoker", "site", "age")]
    raw = sorted(result.p_value for result in accuracies)
    assert min(result.p_adjusted for result in accuracies) == pytest.approx(min(1.0, 3 * raw[0]))


def test_identical_runs_compare_as_equal_on_every_attribute_metric():
    attributes, documents, predictions = study(seed=6)
    counts = attribute_document_counts(rows_of(attributes, documents, predictions))
    comparison = compare_runs(
        counts, counts, attribute_metric_definitions(TYPES), IntervalSettings(resamples=200)
    )
    for key, result in comparison.metrics.items():
        if result.a is not None:
            assert (result.delta, result.p_value) == (0.0, 1.0), key


@pytest.mark.parametrize("cut", [0, 1, 17, 40])
def test_counts_of_parts_of_a_run_joined_are_the_counts_of_the_whole_run(cut):
    # How the intervals' input of chunks scored apart joins into the whole run's.
    attributes, documents, predictions = study(5)
    rows = rows_of(attributes, documents, predictions)
    first = [row for row in rows if int(row.document_id[4:]) < cut]
    second = [row for row in rows if int(row.document_id[4:]) >= cut]
    # The second part first: the joined table is in document order whatever the order of the parts.
    joined = DocumentCounts.joined([attribute_document_counts(second), attribute_document_counts(first)])
    whole = attribute_document_counts(rows)
    parts = [attribute_document_counts(second), attribute_document_counts(first)]
    consumed = DocumentCounts.joined(parts, consume=True)
    assert [part.columns for part in parts] == [{}, {}]  # given up column by column
    assert {name: values.tobytes() for name, values in consumed.columns.items()} == {
        name: values.tobytes() for name, values in joined.columns.items()
    }
    assert joined.document_ids == whole.document_ids
    assert joined.columns.keys() == whole.columns.keys()
    for name, values in whole.columns.items():
        assert joined.columns[name].tobytes() == values.tobytes(), name


def test_counts_of_a_chunks_metric_columns_are_the_counts_of_its_rows():
    # A chunk numbers its attributes by their place in the schema (here reversed), not by its rows.
    attributes, documents, predictions = study(7)
    rows = rows_of(attributes, documents, predictions)
    schema = [(attribute.attribute_id, attribute.type) for attribute in reversed(attributes)]
    columns = metric_columns(rows, {attribute_id: k for k, (attribute_id, _) in enumerate(schema)})
    counts = counts_of_metric_columns(columns, [row.document_id for row in rows], schema, ["doc-99"])
    expected = attribute_document_counts(rows, ["doc-99"])
    assert counts.document_ids == expected.document_ids
    assert counts.columns.keys() == expected.columns.keys()
    assert "site.given_bad_source.edit_match" in counts.columns and "age.all.abs_error" in counts.columns
    for name, values in expected.columns.items():
        assert counts.columns[name].tobytes() == values.tobytes(), name
    assert counts.totals()["smoker.all.tp"] == sum(
        row.attribute_id == "smoker" and row.human_extraction is True and row.llm_extraction is True
        for row in rows
    )
