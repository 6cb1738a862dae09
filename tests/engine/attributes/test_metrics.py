"""Per-attribute counts and metrics: formulas, null rules, strata, custom metrics, column order."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk

from metrics.engine.attributes.evaluation import evaluation_from_columns
from metrics.engine.attributes.metrics import (
    COUNT_COLUMNS,
    MetricColumns,
    attribute_result,
    metric_column_order,
    metric_columns,
)
from metrics.engine.attributes.types import AttributeType, EvaluationSettings, MatchStatus
from tests.engine.attributes.test_support import compare_documents, evaluate, gold, predicted, result_of, spec

BOOL, STRING, INTEGER, FLOAT = (
    AttributeType.BOOL,
    AttributeType.STRING,
    AttributeType.INTEGER,
    AttributeType.FLOAT,
)


def bool_evaluation(pairs, **settings):
    documents = [gold(f"d{i}", {"flag": g}) for i, (g, _) in enumerate(pairs)]
    predictions = [predicted(f"d{i}", {} if p is None else {"flag": p}) for i, (_, p) in enumerate(pairs)]
    return evaluate([spec("flag", BOOL)], documents, predictions, **settings)


def sklearn_or_none(function, y_true, y_pred):
    value = function(y_true, y_pred, zero_division=np.nan)
    return None if math.isnan(value) else value


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_bool_metrics_agree_with_scikit_learn(pairs):
    result = result_of(bool_evaluation(pairs), "flag")
    y_true = [g for g, _ in pairs]
    y_pred = [p for _, p in pairs]
    assert result.metrics["accuracy"] == pytest.approx(sk.accuracy_score(y_true, y_pred))
    assert result.metrics["precision"] == pytest.approx(sklearn_or_none(sk.precision_score, y_true, y_pred))
    assert result.metrics["recall"] == pytest.approx(sklearn_or_none(sk.recall_score, y_true, y_pred))
    assert result.metrics["f1_score"] == pytest.approx(sklearn_or_none(sk.f1_score, y_true, y_pred))
    assert result.metrics["n_labels"] == sum(y_true)
    assert result.metrics["accuracy_given_prediction"] == result.metrics["accuracy"]


def test_undefined_bool_metrics_are_null_not_0():
    metrics = result_of(bool_evaluation([(False, False), (False, False)]), "flag").metrics
    assert metrics["accuracy"] == 1.0
    assert (metrics["precision"], metrics["recall"], metrics["f1_score"]) == (None, None, None)
    assert metrics["n_labels"] == 0


def test_a_missing_prediction_blanks_the_scores_but_not_the_counts():
    result = result_of(bool_evaluation([(True, True), (True, None), (False, False)]), "flag")
    assert result.counts == {"n_gold_instances": 3, "n_missing_predictions": 1, "n_invalid_gold": 0}
    assert all(result.metrics[name] is None for name in ("accuracy", "precision", "recall", "f1_score"))
    assert result.metrics["n_labels"] == 2
    assert result.metrics["accuracy_given_prediction"] == 1.0
    assert result.metrics["f1_score_given_prediction"] == 1.0


def test_metric_keys_follow_the_column_order_of_their_type():
    result = result_of(bool_evaluation([(True, True)]), "flag")
    assert list(result.metrics) == metric_column_order([BOOL], [])


STRING_CASES = st.lists(
    st.tuples(
        st.sampled_from(["Leeds", "York", "Hull", "Leeds Royal Infirmary"]),
        st.sampled_from(["Leeds", "leeds", "York ", "Hul", "Leeds Royal Infirmery", "Bath"]),
        st.sampled_from(["trial in Leeds", "York and Hull", "nothing here"]),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=100, deadline=None)
@given(STRING_CASES)
def test_string_metrics_are_shares_of_match_statuses(cases):
    documents = [gold(f"d{i}", {"city": g}) for i, (g, _, _) in enumerate(cases)]
    predictions = [predicted(f"d{i}", {"city": p}, context=c) for i, (_, p, c) in enumerate(cases)]
    evaluation = evaluate([spec("city", STRING)], documents, predictions)
    result = result_of(evaluation, "city")
    statuses = [row.match_status for row in evaluation.rows]
    n = len(statuses)
    exact = statuses.count(MatchStatus.EXACT_MATCH)
    assert result.metrics["accuracy"] == pytest.approx(exact / n)
    assert result.metrics["edit_distance_match_rate"] == pytest.approx(
        (exact + statuses.count(MatchStatus.NEAR_MATCH)) / n
    )
    assert result.counts["n_good_source_instances"] == sum(
        row.gold_value_in_context is True for row in evaluation.rows
    )
    good = [row for row in evaluation.rows if row.gold_value_in_context]
    expected_good = (
        sum(row.match_status is MatchStatus.EXACT_MATCH for row in good) / len(good) if good else None
    )
    assert result.metrics["accuracy_given_good_source"] == pytest.approx(expected_good)
    assert result.metrics["edit_distance_match_rate"] >= result.metrics["accuracy"]


def test_an_empty_stratum_gives_null():
    evaluation = evaluate(
        [spec("city", STRING)],
        [gold("d1", {"city": "Leeds"})],
        [predicted("d1", {"city": "Leeds"}, context="Leeds")],
    )
    metrics = result_of(evaluation, "city").metrics
    assert metrics["accuracy_given_good_source"] == 1.0
    assert metrics["accuracy_given_bad_source"] is None
    assert metrics["edit_distance_match_rate_given_bad_source"] is None


def numeric_evaluation(attribute_type, pairs, **settings):
    documents = [gold(f"d{i}", {"value": g}) for i, (g, _) in enumerate(pairs)]
    predictions = [predicted(f"d{i}", {} if p is None else {"value": p}) for i, (_, p) in enumerate(pairs)]
    return evaluate([spec("value", attribute_type)], documents, predictions, **settings)


def test_numeric_metrics():
    metrics = result_of(numeric_evaluation(INTEGER, [(100, 100), (50, 40), (10, 12)]), "value").metrics
    assert metrics["accuracy"] == pytest.approx(1 / 3)
    assert metrics["mean_absolute_error"] == pytest.approx(4.0)
    assert metrics["mean_absolute_percentage_error"] == pytest.approx((0 + 0.2 + 0.2) / 3)
    assert metrics["mean_absolute_error"] == pytest.approx(
        sk.mean_absolute_error([100, 50, 10], [100, 40, 12])
    )
    assert metrics["mean_absolute_percentage_error"] == pytest.approx(
        sk.mean_absolute_percentage_error([100, 50, 10], [100, 40, 12])
    )


def test_mape_is_null_when_a_gold_value_is_0():
    metrics = result_of(numeric_evaluation(INTEGER, [(0, 0), (10, 12)]), "value").metrics
    assert metrics["mean_absolute_percentage_error"] is None
    assert metrics["mean_absolute_error"] == pytest.approx(1.0)


def test_floats_are_accurate_within_the_relative_tolerance():
    metrics = result_of(numeric_evaluation(FLOAT, [(0.3, 0.1 + 0.2), (2.0, 2.5)]), "value").metrics
    assert metrics["accuracy"] == 0.5
    strict = result_of(numeric_evaluation(FLOAT, [(0.3, 0.1 + 0.2)], float_relative_tolerance=0.0), "value")
    assert strict.metrics["accuracy"] == 0.0


def test_an_unparseable_gold_number_is_counted_and_left_out_of_every_metric():
    result = result_of(numeric_evaluation(INTEGER, [("twelve", 0), (10, 10)]), "value")
    assert result.counts["n_invalid_gold"] == 1
    assert result.counts["n_gold_instances"] == 1
    assert result.metrics["accuracy"] == 1.0
    assert result.metrics["mean_absolute_error"] == 0.0


def test_numeric_missing_predictions_blank_scores_and_strata():
    result = result_of(numeric_evaluation(FLOAT, [(1.5, None), (2.0, 2.0)]), "value")
    assert result.counts["n_missing_predictions"] == 1
    assert result.metrics["mean_absolute_error"] is None
    assert result.metrics["mean_absolute_error_given_bad_source"] is None
    assert result.metrics["mean_absolute_error_given_prediction"] == 0.0
    assert result.metrics["accuracy_given_prediction"] == 1.0


def test_list_and_dict_get_counts_only():
    result = result_of(
        evaluate([spec("arms", AttributeType.LIST)], [gold("d1", {"arms": ["a"]})], [predicted("d1", {})]),
        "arms",
    )
    assert result.counts == {"n_gold_instances": 1, "n_missing_predictions": 1, "n_invalid_gold": 0}
    assert result.metrics == {}


def test_a_custom_metric_belongs_to_its_evaluation_only():
    pairs = [(True, True), (False, True), (True, False), (False, False), (True, True)]
    first = result_of(bool_evaluation(pairs, custom_metrics=("matthews_corrcoef",)), "flag")
    y_true, y_pred = [g for g, _ in pairs], [p for _, p in pairs]
    assert first.metrics["matthews_corrcoef"] == pytest.approx(sk.matthews_corrcoef(y_true, y_pred))
    assert first.metrics["matthews_corrcoef_given_prediction"] == pytest.approx(
        sk.matthews_corrcoef(y_true, y_pred)
    )
    second = result_of(bool_evaluation(pairs), "flag")
    assert "matthews_corrcoef" not in second.metrics
    assert "matthews_corrcoef_given_prediction" not in second.metrics


def test_custom_metrics_apply_to_bool_attributes_only():
    evaluation = evaluate(
        [spec("city", STRING)],
        [gold("d1", {"city": "Leeds"})],
        [predicted("d1", {"city": "Leeds"})],
        custom_metrics=("cohen_kappa_score",),
    )
    assert "cohen_kappa_score" not in result_of(evaluation, "city").metrics
    assert any("BOOL attributes only" in warning for warning in evaluation.warnings)


def test_an_undefined_custom_metric_is_null():
    metrics = result_of(
        bool_evaluation([(True, True), (True, True)], custom_metrics=("cohen_kappa_score",)), "flag"
    ).metrics
    assert metrics["cohen_kappa_score"] is None


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("accuracy_scorer", "unknown custom metric"),
        ("os", "unknown custom metric"),
        ("confusion_matrix", "does not return a float"),
        ("f1_score", "already computed"),
    ],
)
def test_custom_metric_names_are_checked(name, message):
    with pytest.raises(ValueError, match=message):
        bool_evaluation([(True, True)], custom_metrics=(name,))


def test_metrics_over_rows_of_chunks_equal_the_whole_evaluation():
    schema = [spec("flag", BOOL), spec("city", STRING), spec("n", INTEGER)]
    documents = [gold(f"d{i}", {"flag": i % 2 == 0, "city": "Leeds", "n": i}) for i in range(7)]
    predictions = {
        f"d{i}": predicted(
            f"d{i}",
            {"flag": i % 3 == 0, "city": "Leeds" if i % 2 else "Hull", "n": i + i % 2},
            context="Leeds 3",
        )
        for i in range(7)
    }
    settings_ = EvaluationSettings()
    rows = []
    for start in (0, 3, 6):
        chunk_rows, _ = compare_documents(
            run_id="run-1",
            attributes=schema,
            gold_documents=documents[start : start + 3],
            predictions=predictions,
            settings=settings_,
        )
        rows.extend(chunk_rows)
    whole = evaluate(schema, documents, list(predictions.values()))
    own_rows = {s.attribute_id: [row for row in rows if row.attribute_id == s.attribute_id] for s in schema}
    results = [
        attribute_result(s, metric_columns(own_rows[s.attribute_id], {s.attribute_id: 0}), {}) for s in schema
    ]
    assert results == whole.attributes


def test_metrics_from_the_joined_columns_of_chunks_equal_the_whole_evaluation():
    """What the files path does: each chunk's rows become MetricColumns, the parts are joined, and
    the evaluation is built from the columns alone."""
    schema = [spec("flag", BOOL), spec("city", STRING), spec("n", INTEGER), spec("x", FLOAT)]
    documents = [
        gold(f"d{i}", {"flag": i % 2 == 0, "city": "Leeds", "n": i, "x": "n/a" if i == 4 else i / 3})
        for i in range(9)
    ]
    predictions = {
        f"d{i}": predicted(
            f"d{i}",
            {"flag": i % 3 == 0, "city": "Leeds" if i % 2 else "Hull", "n": i + i % 2, "x": i / 3},
            context="Leeds 3" if i != 5 else None,
        )
        for i in range(8)
    }
    settings_ = EvaluationSettings(custom_metrics=("balanced_accuracy_score",))
    positions = {attribute.attribute_id: index for index, attribute in enumerate(schema)}
    parts = []
    for start in (0, 2, 7):
        chunk_rows, _ = compare_documents(
            run_id="run-1",
            attributes=schema,
            gold_documents=documents[start : start + (2 if start == 0 else 5)],
            predictions=predictions,
            settings=settings_,
        )
        parts.append(metric_columns(chunk_rows, positions))
    whole = evaluate(schema, documents, list(predictions.values()), custom_metrics=settings_.custom_metrics)
    joined = evaluation_from_columns(
        run_id="run-1",
        attributes=schema,
        columns=MetricColumns.joined(parts),
        row_warnings=[],
        unscored=[],
        without_context=[],
        ignored_note=[],
        settings=settings_,
    )
    assert joined.attributes == whole.attributes
    assert any(result.counts["n_invalid_gold"] for result in joined.attributes)


def test_metric_column_order():
    assert metric_column_order([BOOL], ["roc_auc_score", "matthews_corrcoef"]) == [
        "accuracy",
        "precision",
        "recall",
        "f1_score",
        "n_labels",
        "accuracy_given_prediction",
        "precision_given_prediction",
        "recall_given_prediction",
        "f1_score_given_prediction",
        "matthews_corrcoef",
        "matthews_corrcoef_given_prediction",
        "roc_auc_score",
        "roc_auc_score_given_prediction",
    ]
    assert metric_column_order([FLOAT, STRING], ["matthews_corrcoef"]) == [
        "accuracy",
        "accuracy_given_good_source",
        "accuracy_given_bad_source",
        "edit_distance_match_rate",
        "edit_distance_match_rate_given_good_source",
        "edit_distance_match_rate_given_bad_source",
        "mean_absolute_error",
        "mean_absolute_error_given_good_source",
        "mean_absolute_error_given_bad_source",
        "mean_absolute_percentage_error",
        "mean_absolute_percentage_error_given_good_source",
        "mean_absolute_percentage_error_given_bad_source",
        "accuracy_given_prediction",
        "edit_distance_match_rate_given_prediction",
        "mean_absolute_error_given_prediction",
        "mean_absolute_percentage_error_given_prediction",
    ]
    assert metric_column_order([AttributeType.LIST], []) == []


def test_count_columns():
    assert COUNT_COLUMNS == (
        "n_gold_instances",
        "n_good_source_instances",
        "n_good_citation_instances",
        "n_missing_predictions",
        "n_invalid_gold",
    )
