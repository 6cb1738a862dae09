"""Confidence intervals of an extraction run: `intervals` per attribute in metrics.json, a
`<metric>_ci_low` / `<metric>_ci_high` pair right after each metric in metrics.csv, the settings in
`intervals_config` and config.yaml, and the command's --confidence-level, --resamples and --seed."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from metrics.artefacts.exports import intervals_from_metrics_report
from metrics.artefacts.metrics_files import metrics_report, write_metrics_csv
from metrics.engine.attributes.types import AttributeType
from metrics.engine.uncertainty.attribute_metrics import attribute_document_counts
from metrics.engine.uncertainty.bootstrap import Interval
from metrics.pipeline.extraction_evaluation import resolve_settings
from metrics.pipeline.extraction_folder import evaluate_extraction_to_folder
from metrics.pipeline.intervals import IntervalSettings, extraction_intervals
from tests.artefacts.factories import evaluation, result, spec
from tests.engine.uncertainty.test_attribute_metrics import TYPES, rows_of, study
from tests.pipeline.intervals.factories import extraction_inputs, extraction_predictions

DOCUMENTS = 40


@pytest.fixture
def run_files(tmp_path: Path) -> dict[str, Path]:
    gold, prompts = extraction_inputs(tmp_path, DOCUMENTS)
    # Wrong on every fifth randomisation flag and every seventh country; document 3 has no line.
    predictions = extraction_predictions(
        tmp_path,
        "llm",
        DOCUMENTS,
        wrong=lambda index, attribute_id: (
            (attribute_id == "101" and index % 5 == 0) or (attribute_id == "102" and index % 7 == 0)
        ),
        skip=[3],
    )
    return {"gold": gold, "prompts": prompts, "predictions": predictions}


def evaluate(run_files: dict[str, Path], output_dir: Path, *extra: str) -> None:
    call_command(
        "evaluate_extraction",
        "--gold",
        str(run_files["gold"]),
        "--prompts",
        str(run_files["prompts"]),
        "--predictions",
        str(run_files["predictions"]),
        "--output-dir",
        str(output_dir),
        *extra,
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )


def by_id(report: dict) -> dict[str, dict]:
    return {attribute["attribute_id"]: attribute for attribute in report["attributes"]}


def test_each_attribute_of_metrics_json_has_its_intervals_keyed_by_metric(run_files, tmp_path):
    evaluate(run_files, tmp_path / "run")

    report = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert report["intervals_config"] == {
        "level": 0.95,
        "resamples": 2000,
        "seed": 20260808,
        "method": "cluster_bootstrap_percentile",
    }
    attributes = by_id(report)
    randomised = attributes["101"]
    # Document 3 failed, so by the seed's rule accuracy is null: no interval either.
    assert "accuracy" not in randomised["metrics"] and "accuracy" not in randomised["intervals"]
    assert set(randomised["intervals"]) == {
        "accuracy_given_prediction",
        "precision_given_prediction",
        "recall_given_prediction",
        "f1_score_given_prediction",
    }
    interval = randomised["intervals"]["accuracy_given_prediction"]
    assert interval["low"] <= randomised["metrics"]["accuracy_given_prediction"] <= interval["high"]
    assert interval["method"] == "cluster_bootstrap_percentile"
    assert "edit_distance_match_rate_given_good_source" in attributes["102"]["intervals"]
    assert "mean_absolute_error_given_prediction" in attributes["103"]["intervals"]


def test_metrics_csv_puts_each_interval_right_after_its_metric(run_files, tmp_path):
    evaluate(run_files, tmp_path / "run")

    with open(tmp_path / "run" / "metrics.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
        header = list(rows[0])
    at = header.index("accuracy_given_prediction")
    assert header[at + 1 : at + 3] == [
        "accuracy_given_prediction_ci_low",
        "accuracy_given_prediction_ci_high",
    ]
    assert header[header.index("accuracy") + 1] == "accuracy_ci_low"
    assert "n_labels_ci_low" not in header
    randomised = next(row for row in rows if row["attribute_id"] == "101")
    assert randomised["accuracy"] == randomised["accuracy_ci_low"] == randomised["accuracy_ci_high"] == ""
    assert float(randomised["accuracy_given_prediction_ci_low"]) <= float(
        randomised["accuracy_given_prediction"]
    )


def test_config_yaml_records_the_interval_settings(run_files, tmp_path):
    evaluate(run_files, tmp_path / "run", "--confidence-level", "0.9", "--resamples", "300", "--seed", "5")

    config = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert config["intervals"] == {
        "level": 0.9,
        "resamples": 300,
        "seed": 5,
        "method": "cluster_bootstrap_percentile",
    }


def test_the_same_input_and_seed_give_the_same_intervals(run_files, tmp_path):
    evaluate(run_files, tmp_path / "first", "--seed", "3", "--resamples", "400")
    evaluate(run_files, tmp_path / "second", "--seed", "3", "--resamples", "400")
    evaluate(run_files, tmp_path / "other", "--seed", "4", "--resamples", "400")

    first, second, other = (
        json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("first", "second", "other")
    )
    assert first["attributes"] == second["attributes"]
    assert by_id(first)["101"]["intervals"] != by_id(other)["101"]["intervals"]


def test_zero_resamples_writes_no_intervals(run_files, tmp_path):
    evaluate(run_files, tmp_path / "run", "--resamples", "0")

    report = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert report["intervals_config"]["resamples"] == 0
    assert all("intervals" not in attribute for attribute in report["attributes"])
    header = (tmp_path / "run" / "metrics.csv").read_text().splitlines()[0]
    assert "_ci_low" not in header


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--confidence-level", "1.5", "--confidence-level: must be a number between 0 and 1"),
        ("--resamples", "-1", "--resamples: must be an integer >= 0"),
        ("--seed", "-2", "--seed: must be an integer >= 0"),
    ],
)
def test_a_bad_interval_flag_is_bad_input(run_files, tmp_path, flag, value, message):
    with pytest.raises(CommandError) as error:
        evaluate(run_files, tmp_path / "run", flag, value)

    assert error.value.returncode == 2
    assert message in str(error.value)
    assert not (tmp_path / "run").exists()


def test_the_evaluation_times_its_intervals(run_files, tmp_path):
    phases: dict[str, float] = {}

    run = evaluate_extraction_to_folder(
        gold=run_files["gold"],
        prompts=run_files["prompts"],
        predictions=run_files["predictions"],
        output_dir=tmp_path / "run",
        run_id="r",
        settings=resolve_settings(),
        phase_seconds=phases,
        intervals=IntervalSettings(resamples=200),
    )

    assert [phase for phase in phases if not phase.startswith("write ")] == ["load", "score", "intervals"]
    assert set(run.intervals) == {"101", "102", "103"}


def test_the_writers_without_intervals_write_what_they_wrote_before():
    plain = evaluation(
        [result(spec("101", "Randomised", AttributeType.BOOL), {"accuracy": 0.75}, n_gold_instances=4)]
    )
    destination = io.StringIO()

    write_metrics_csv(plain, destination)

    assert "_ci_" not in destination.getvalue()
    report = metrics_report(plain)
    assert "intervals_config" not in report and "intervals" not in report["attributes"][0]


def test_a_null_interval_is_a_blank_pair_in_the_csv_and_left_out_of_the_json():
    plain = evaluation(
        [
            result(
                spec("101", "Randomised", AttributeType.BOOL),
                {"accuracy": 0.75, "recall": None},
                n_gold_instances=4,
            )
        ]
    )
    intervals = {
        "101": {
            "accuracy": Interval(0.5, 1.0, 0.95, "cluster_bootstrap_percentile", 2000, 1),
            "recall": Interval(None, None, 0.95, "cluster_bootstrap_percentile", 2000, 1),
        }
    }
    destination = io.StringIO()

    write_metrics_csv(plain, destination, intervals=intervals)
    report = metrics_report(plain, intervals=intervals, intervals_config={"resamples": 2000})

    row = next(csv.DictReader(io.StringIO(destination.getvalue())))
    assert (row["accuracy_ci_low"], row["accuracy_ci_high"]) == ("0.5", "1.0")
    assert (row["recall_ci_low"], row["recall_ci_high"]) == ("", "")
    assert report["attributes"][0]["intervals"] == {
        "accuracy": {
            "low": 0.5,
            "high": 1.0,
            "level": 0.95,
            "method": "cluster_bootstrap_percentile",
            "resamples": 2000,
            "seed": 1,
        }
    }
    assert list(report) == ["extraction_run_id", "format_version", "intervals_config", "attributes"]


def test_a_stored_metrics_report_gives_back_its_intervals(run_files, tmp_path):
    run = evaluate_extraction_to_folder(
        gold=run_files["gold"],
        prompts=run_files["prompts"],
        predictions=run_files["predictions"],
        output_dir=tmp_path / "run",
        run_id="r",
        settings=resolve_settings(),
        intervals=IntervalSettings(resamples=300),
    )
    report = metrics_report(
        run.evaluation, intervals=run.intervals, intervals_config=run.interval_settings.as_config()
    )
    from_report, direct = io.StringIO(), io.StringIO()

    write_metrics_csv(run.evaluation, from_report, intervals=intervals_from_metrics_report(report))
    write_metrics_csv(run.evaluation, direct, intervals=run.intervals)

    assert from_report.getvalue() == direct.getvalue()
    assert intervals_from_metrics_report(metrics_report(run.evaluation)) is None


def test_a_missing_prediction_nulls_the_interval_but_not_the_given_prediction_one():
    attributes, documents, predictions = study(seed=2, missing=True)
    counts = attribute_document_counts(rows_of(attributes, documents, predictions))
    intervals = extraction_intervals(counts, TYPES, IntervalSettings(resamples=300))
    assert (intervals["site"]["accuracy"].low, intervals["site"]["accuracy"].high) == (None, None)
    given = intervals["site"]["accuracy_given_prediction"]
    assert 0 <= given.low <= given.high <= 1
    assert intervals["smoker"]["accuracy"].as_dict()["resamples"] == 300
    assert intervals["notes"] == {}
