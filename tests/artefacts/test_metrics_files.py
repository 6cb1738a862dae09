"""metrics.csv and metrics.json: one row per attribute, sorted by label, nulls blank or omitted."""

from __future__ import annotations

import csv
import io
import json

from metrics.artefacts.cells import write_json
from metrics.artefacts.metrics_files import format_metrics_table, metrics_report, write_metrics_csv
from metrics.engine.attributes.metrics import COUNT_COLUMNS, metric_column_order
from metrics.engine.attributes.types import AttributeType
from tests.artefacts.factories import evaluation, result, spec

RANDOMISED = spec("101", "Randomised", AttributeType.BOOL)
COUNTRY = spec("102", "Country", AttributeType.STRING)
AGE = spec("104", "Mean age", AttributeType.FLOAT)


def two_attribute_evaluation():
    return evaluation(
        [
            result(
                RANDOMISED,
                {"accuracy": 0.75, "precision": None, "recall": 0.5, "f1_score": None, "n_labels": 2},
                n_gold_instances=4,
                n_good_source_instances=None,
                n_good_citation_instances=None,
            ),
            result(
                COUNTRY,
                {"accuracy": None, "accuracy_given_prediction": 1.0, "edit_distance_match_rate": 0.5},
                n_gold_instances=4,
                n_missing_predictions=1,
            ),
        ]
    )


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_metrics_csv_columns_are_identity_then_counts_then_the_engine_metric_order():
    destination = io.StringIO()

    write_metrics_csv(two_attribute_evaluation(), destination)

    header = csv_rows(destination.getvalue())[0]
    expected_metrics = metric_column_order([AttributeType.BOOL, AttributeType.STRING], [])
    assert header == [
        "extraction_run_id",
        "attribute_id",
        "attribute_label",
        "attribute_type",
        *COUNT_COLUMNS,
        *expected_metrics,
    ]
    assert header[4:9] == [
        "n_gold_instances",
        "n_good_source_instances",
        "n_good_citation_instances",
        "n_missing_predictions",
        "n_invalid_gold",
    ]


def test_metrics_csv_rows_are_sorted_by_label_and_null_is_blank():
    destination = io.StringIO()

    write_metrics_csv(two_attribute_evaluation(), destination)

    header, *rows = csv_rows(destination.getvalue())
    by_name = [dict(zip(header, values, strict=True)) for values in rows]
    assert [r["attribute_label"] for r in by_name] == ["Country", "Randomised"]
    country, randomised = by_name
    assert (country["extraction_run_id"], country["attribute_id"], country["attribute_type"]) == (
        "run-1",
        "102",
        "STRING",
    )
    assert country["accuracy"] == "" and country["accuracy_given_prediction"] == "1.0"
    assert country["n_missing_predictions"] == "1"
    assert randomised["precision"] == "" and randomised["recall"] == "0.5" and randomised["n_labels"] == "2"
    assert randomised["n_good_source_instances"] == ""


def test_custom_metrics_get_their_columns():
    destination = io.StringIO()

    write_metrics_csv(two_attribute_evaluation(), destination, custom_metrics=["matthews_corrcoef"])

    header = csv_rows(destination.getvalue())[0]
    assert header[-2:] == ["matthews_corrcoef", "matthews_corrcoef_given_prediction"]


def test_a_metric_outside_the_engine_order_is_kept_at_the_end_rather_than_dropped():
    unusual = evaluation([result(AGE, {"accuracy": 1.0, "zz_unlisted": 0.25})])
    destination = io.StringIO()

    write_metrics_csv(unusual, destination)

    header, values = csv_rows(destination.getvalue())
    assert header[-1] == "zz_unlisted" and values[-1] == "0.25"


def test_metrics_json_omits_nulls_and_keeps_the_same_order_and_values():
    destination = io.StringIO()

    write_json(metrics_report(two_attribute_evaluation()), destination)

    report = json.loads(destination.getvalue())
    assert report["extraction_run_id"] == "run-1" and report["format_version"] == 1
    country, randomised = report["attributes"]
    assert country == {
        "attribute_id": "102",
        "attribute_label": "Country",
        "attribute_type": "STRING",
        "counts": {
            "n_gold_instances": 4,
            "n_good_source_instances": 0,
            "n_good_citation_instances": 0,
            "n_missing_predictions": 1,
            "n_invalid_gold": 0,
        },
        "metrics": {"edit_distance_match_rate": 0.5, "accuracy_given_prediction": 1.0},
    }
    assert randomised["metrics"] == {"accuracy": 0.75, "recall": 0.5, "n_labels": 2}
    assert "n_good_source_instances" not in randomised["counts"]


def test_the_console_table_shows_the_value_given_a_prediction_when_the_headline_is_null():
    table = format_metrics_table(two_attribute_evaluation())

    header, rule, country, randomised, footnote = table.splitlines()
    assert header.split()[:5] == ["attribute", "type", "n_gold", "n_missing", "n_invalid_gold"]
    assert "_given_" not in header
    assert country.split()[:6] == ["Country", "STRING", "4", "1", "0", "(1.000)"]
    assert randomised.split()[5:8] == ["0.750", "-", "0.500"]
    assert footnote.startswith("(x): null over all documents because predictions are missing")


def test_our_negative_numbers_stay_numbers_while_user_text_is_escaped():
    dose = spec("105", "-dose", AttributeType.BOOL)
    destination = io.StringIO()

    write_metrics_csv(
        evaluation([result(dose, {"matthews_corrcoef": -0.5})]),
        destination,
        custom_metrics=["matthews_corrcoef"],
    )

    header, values = csv_rows(destination.getvalue())
    row = dict(zip(header, values, strict=True))
    assert row["attribute_label"] == "'-dose"
    assert row["matthews_corrcoef"] == "-0.5"
