"""The quality gate: a run passes only on numbers it could read, and a bad threshold file says why."""

from __future__ import annotations

import pytest

from metrics.engine.gate import (
    Check,
    ThresholdFileError,
    evaluate_gate,
    parse_checks,
    render_gate_table,
    unknown_metrics,
)


def interval(low, high):
    return {
        "low": low,
        "high": high,
        "level": 0.95,
        "method": "cluster_bootstrap_percentile",
        "resamples": 2000,
        "seed": 20260808,
    }


EXTRACTION_RUN = {
    "extraction_run_id": "run-42",
    "format_version": 1,
    "attributes": [
        {
            "attribute_id": "5001",
            "counts": {"n_gold_instances": 200},
            "metrics": {"accuracy": 0.86, "precision": 0.9},
            "intervals": {"accuracy": interval(0.79, 0.91), "precision": interval(None, None)},
        },
        {
            "attribute_id": "5003",
            "counts": {"n_gold_instances": 200, "n_missing_predictions": 3},
            # accuracy is null under the missing-prediction rule, so metrics.json omits it
            "metrics": {"mean_absolute_error_given_prediction": 1.2},
            "intervals": {"mean_absolute_error_given_prediction": interval(0.9, 1.6)},
        },
    ],
}

SPAN_RUN = {
    "micro": {
        "chars": {
            "all": {"recall": 0.97, "recall_ci": interval(0.955, 0.982), "precision": None},
            "scored": {"f1": 0.91, "f1_ci": interval(0.89, 0.93)},
        }
    }
}


def gate(checks, document, baselines=None):
    return evaluate_gate(parse_checks({"checks": checks}), document, baselines)


def test_the_issues_example_passes_for_a_good_run():
    checks = [
        {"metric": "accuracy", "attribute": "5001", "min": 0.75, "on": "lower_bound"},
        {"metric": "micro.chars.all.recall", "min": 0.95, "on": "estimate"},
    ]
    combined = {**EXTRACTION_RUN, **SPAN_RUN}
    result = gate(checks, combined)
    assert result.passed
    assert [check.observed for check in result.checks] == [0.79, 0.97]
    assert [check.threshold for check in result.checks] == [0.75, 0.95]


def test_a_lower_bound_check_fails_when_the_estimate_passes_but_the_bound_does_not():
    result = gate(
        [{"metric": "accuracy", "attribute": "5001", "min": 0.8, "on": "lower_bound"}], EXTRACTION_RUN
    )
    assert not result.passed
    (check,) = result.checks
    assert (check.observed, check.threshold, check.on) == (0.79, 0.8, "lower_bound")
    assert check.reason == "0.79 does not meet >= 0.8"
    estimate = gate([{"metric": "accuracy", "attribute": "5001", "min": 0.8}], EXTRACTION_RUN)
    assert estimate.passed


def test_a_missing_metric_fails_with_its_reason():
    result = gate([{"metric": "accuracy", "attribute": "5003", "min": 0.5}], EXTRACTION_RUN)
    assert not result.passed
    assert result.checks[0].observed is None
    assert (
        result.checks[0].reason == "accuracy of attribute 5003 is missing (metrics.json omits null metrics)"
    )


def test_a_null_metric_fails_with_its_reason():
    result = gate([{"metric": "micro.chars.all.precision", "min": 0.5}], SPAN_RUN)
    assert not result.passed
    assert result.checks[0].reason == "micro.chars.all.precision is null"


def test_a_null_interval_bound_fails_with_its_reason():
    result = gate(
        [{"metric": "precision", "attribute": "5001", "min": 0.5, "on": "lower_bound"}], EXTRACTION_RUN
    )
    assert not result.passed
    assert result.checks[0].reason == "the lower bound of precision of attribute 5001 is null"


def test_a_metric_without_an_interval_fails_a_bound_check():
    result = gate(
        [{"metric": "micro.chars.all.precision", "min": 0.5, "on": "lower_bound"}], {"micro": {"x": 1}}
    )
    assert result.checks[0].reason == "micro.chars.all.precision is missing from the metrics document"
    no_ci = {"micro": {"chars": {"all": {"recall": 0.97}}}}
    result = gate([{"metric": "micro.chars.all.recall", "min": 0.5, "on": "lower_bound"}], no_ci)
    assert result.checks[0].reason == "micro.chars.all.recall_ci is missing from the metrics document"


def test_an_unknown_attribute_fails_with_its_reason():
    result = gate([{"metric": "accuracy", "attribute": 9999, "min": 0.5}], EXTRACTION_RUN)
    assert result.checks[0].reason == "attribute 9999 is not in the metrics document"


def test_an_integer_attribute_id_names_the_same_attribute_as_its_text():
    assert gate([{"metric": "accuracy", "attribute": 5001, "min": 0.5}], EXTRACTION_RUN).passed


def test_max_checks_hold_the_value_at_or_below_the_limit():
    upper = {"metric": "mean_absolute_error_given_prediction", "attribute": "5003", "on": "upper_bound"}
    assert gate([{**upper, "max": 1.6}], EXTRACTION_RUN).passed
    failed = gate([{**upper, "max": 1.5}], EXTRACTION_RUN)
    assert not failed.passed
    assert (failed.checks[0].observed, failed.checks[0].comparison) == (1.6, "<=")
    assert failed.checks[0].reason == "1.6 does not meet <= 1.5"


def test_non_inferiority_passes_within_the_margin_of_the_baseline():
    baseline = {"micro": {"chars": {"scored": {"f1": 0.925}}}}
    result = gate(
        [{"metric": "micro.chars.scored.f1", "baseline": "run-41", "margin": 0.02}],
        SPAN_RUN,
        {"run-41": baseline},
    )
    assert result.passed
    assert result.checks[0].threshold == pytest.approx(0.905)
    assert result.checks[0].baseline == "run-41"


def test_non_inferiority_fails_beyond_the_margin_of_the_baseline():
    baseline = {"micro": {"chars": {"scored": {"f1": 0.94}}}}
    result = gate(
        [{"metric": "micro.chars.scored.f1", "baseline": "run-41", "margin": 0.02}],
        SPAN_RUN,
        {"run-41": baseline},
    )
    assert not result.passed
    assert result.checks[0].threshold == pytest.approx(0.92)


def test_non_inferiority_of_an_error_metric_allows_the_margin_upwards():
    check = {
        "metric": "mean_absolute_error_given_prediction",
        "attribute": "5003",
        "baseline": "run-41",
        "margin": 0.1,
        "direction": "lower",
    }
    baseline = {
        "attributes": [{"attribute_id": "5003", "metrics": {"mean_absolute_error_given_prediction": 1.15}}]
    }
    assert gate([check], EXTRACTION_RUN, {"run-41": baseline}).passed
    baseline["attributes"][0]["metrics"]["mean_absolute_error_given_prediction"] = 1.05
    assert not gate([check], EXTRACTION_RUN, {"run-41": baseline}).passed


def test_a_baseline_that_was_not_supplied_or_lacks_the_metric_fails():
    check = {"metric": "micro.chars.scored.f1", "baseline": "run-41"}
    assert gate([check], SPAN_RUN).checks[0].reason == "baseline: baseline run run-41 was not supplied"
    result = gate([check], SPAN_RUN, {"run-41": {"micro": {}}})
    assert not result.passed
    assert result.checks[0].reason == "baseline: micro.chars.scored.f1 is missing from the metrics document"


def test_one_failed_check_fails_the_gate_and_every_check_is_reported():
    result = gate(
        [
            {"metric": "micro.chars.all.recall", "min": 0.9},
            {"metric": "micro.chars.all.precision", "min": 0.9},
        ],
        SPAN_RUN,
    )
    assert [check.passed for check in result.checks] == [True, False]
    assert not result.passed
    assert result.as_dict()["passed"] is False
    assert result.as_dict()["checks"][0]["observed"] == 0.97


def test_the_table_shows_each_check_and_the_verdict():
    result = gate(
        [
            {"metric": "accuracy", "attribute": "5001", "min": 0.8, "on": "lower_bound"},
            {"metric": "micro.chars.all.recall", "min": 0.95},
        ],
        {**EXTRACTION_RUN, **SPAN_RUN},
    )
    table = render_gate_table(result)
    lines = table.splitlines()
    assert lines[0].split() == ["#", "metric", "attribute", "on", "threshold", "observed", "result", "reason"]
    assert "accuracy" in lines[2] and "5001" in lines[2] and ">= 0.8" in lines[2] and "FAIL" in lines[2]
    assert "micro.chars.all.recall" in lines[3] and "0.97" in lines[3] and "PASS" in lines[3]
    assert lines[-1] == "Gate FAILED: 1 of 2 checks passed."


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([], 'the file must be an object with a "checks" list'),
        ({"checks": []}, "checks: the list is empty; a gate needs at least one check"),
        ({"checks": [{"min": 0.5}]}, "checks[0].metric: required, a non-empty string"),
        ({"checks": [{"metric": "f1"}]}, "checks[0]: needs exactly one of min, max, baseline (found none)"),
        (
            {"checks": [{"metric": "f1", "min": 0.1, "max": 0.9}]},
            "checks[0]: needs exactly one of min, max, baseline (found min, max)",
        ),
        ({"checks": [{"metric": "f1", "min": "0.8"}]}, "checks[0].min: must be a number"),
        ({"checks": [{"metric": "f1", "max": True}]}, "checks[0].max: must be a number"),
        (
            {"checks": [{"metric": "f1", "min": 0.8, "on": "lower"}]},
            "checks[0].on: must be one of estimate, lower_bound, upper_bound, got 'lower'",
        ),
        ({"checks": [{"metric": "f1", "min": 0.8, "minn": 0.9}]}, "checks[0].minn: unknown field"),
        (
            {"checks": [{"metric": "f1", "baseline": "r", "margin": -0.1}]},
            "checks[0].margin: must be a number >= 0",
        ),
        (
            {"checks": [{"metric": "f1", "min": 0.8, "margin": 0.1}]},
            "checks[0].margin: only applies to a baseline check",
        ),
        (
            {"checks": [{"metric": "f1", "baseline": ""}]},
            "checks[0].baseline: must be a run id (a non-empty string)",
        ),
        (
            {"checks": [{"metric": "f1", "baseline": "r", "direction": "up"}]},
            "checks[0].direction: must be one of higher, lower, got 'up'",
        ),
        (
            {"checks": [{"metric": "f1", "attribute": [1], "min": 0.8}]},
            "checks[0].attribute: must be an attribute id (a string or an integer)",
        ),
        ({"checks": ["accuracy >= 0.8"]}, "checks[0]: must be an object"),
        ({"checks": [{"metric": "f1", "min": 0.8}], "check": []}, "unknown top-level field 'check'"),
    ],
)
def test_a_malformed_threshold_file_is_rejected_naming_the_check_and_field(data, problem):
    with pytest.raises(ThresholdFileError) as raised:
        parse_checks(data)
    assert problem in raised.value.problems


def test_every_problem_of_the_file_is_reported_at_once():
    with pytest.raises(ThresholdFileError) as raised:
        parse_checks({"checks": [{"metric": "a", "min": 0.5}, {"metric": "", "min": "x"}, {"metric": "c"}]})
    assert raised.value.problems == [
        "checks[1].metric: required, a non-empty string",
        "checks[1].min: must be a number",
        "checks[2]: needs exactly one of min, max, baseline (found none)",
    ]
    assert str(raised.value).startswith("invalid threshold file: checks[1].metric")


def test_a_dotted_path_to_a_null_value_is_there_and_one_past_a_value_is_not():
    document = {"micro": {"chars": {"all": {"f1": None, "recall": 0.9}}}}
    paths = ["micro.chars.all.f1", "micro.chars", "micro.chars.all.precision", "micro.chars.all.recall.low"]
    checks = [Check(index=i, metric=path, at_least=True) for i, path in enumerate(paths)]

    assert unknown_metrics(checks, document) == [
        "checks[2].metric: unknown metric 'micro.chars.all.precision' for this document",
        "checks[3].metric: unknown metric 'micro.chars.all.recall.low' for this document",
    ]
