"""`manage.py evaluate_extraction`: a reviewer scores a pipeline's extraction run from files.

The fixture in tests/data/extraction (see its README) is a four-document run with a near match, a
wrong number, an invalid prediction, an invalid gold value, a failed extraction and an uncoded
reference.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from annotations.importers.errors import InputValidationError
from annotations.importers.sources import InMemorySource
from metrics.pipeline.extraction_evaluation import (
    compare_extraction_inputs,
    load_config,
    read_extraction_inputs,
    resolve_settings,
)
from tests.artefacts.factories import ARTEFACT_NAMES

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "extraction"
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def evaluate(
    output_dir: Path, *extra: str, gold: str = "gold_eppi.json", predictions: Path | None = None
) -> str:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(
        "evaluate_extraction",
        "--gold",
        str(FIXTURE / gold),
        "--prompts",
        str(FIXTURE / "prompts.csv"),
        "--predictions",
        str(predictions or FIXTURE / "llm.jsonl"),
        "--output-dir",
        str(output_dir),
        *extra,
        stdout=stdout,
        stderr=stderr,
    )
    return stdout.getvalue()


def comparison(output_dir: Path) -> dict[tuple[str, str], dict[str, str]]:
    with open(output_dir / "goldstandard_llm_comparison.csv", newline="", encoding="utf-8") as handle:
        return {(row["document_id"], row["attribute_id"]): row for row in csv.DictReader(handle)}


def test_it_writes_every_artefact_and_prints_the_metrics_table(tmp_path):
    output_dir = tmp_path / "run-7"

    printed = evaluate(output_dir, "--config", str(FIXTURE / "config.yaml"))

    assert sorted(path.name for path in output_dir.iterdir()) == sorted(ARTEFACT_NAMES)
    assert [path.name for path in tmp_path.iterdir()] == ["run-7"]  # no staging folder left
    header, rule, *attribute_lines = printed.splitlines()[:6]
    assert header.split()[:3] == ["attribute", "type", "n_gold"]
    assert [line.split()[0] for line in attribute_lines] == ["Country", "Mean", "Participants", "Randomised"]
    assert "written to" in printed

    rows = comparison(output_dir)
    # 3 scored documents x 4 scored attributes; 1004 has no codes and 105 no prompt.
    assert len(rows) == 12 and {document for document, _ in rows} == {"1001", "1002", "1003"}
    assert rows["1001", "102"]["llm_reasoning"].startswith("'=HYPERLINK")
    assert rows["1002", "101"]["human_extraction"] == "False"  # no BOOL code: False
    assert rows["1001", "101"]["human_extraction"] == "True"  # BOOL code exists: True
    assert rows["1003", "103"]["match_status"] == "invalid_gold"
    assert rows["1002", "104"]["match_status"] == "missing_prediction"

    metrics = json.loads((output_dir / "metrics.json").read_text())
    assert metrics["extraction_run_id"] == "run-7"  # the folder's name by default
    assert [a["attribute_label"] for a in metrics["attributes"]] == [
        "Country",
        "Mean age",
        "Participants",
        "Randomised",
    ]
    log = (output_dir / "evaluation.log").read_text()
    assert "merged into one" in log and "unscored document (no gold): 1004" in log and "'forty-one'" in log
    assert "has an empty prompt and is not scored" in log
    prompts_used = (output_dir / "prompts_used.csv").read_text()
    assert "Funding source" not in prompts_used and "Mean age" in prompts_used
    metadata = json.loads((output_dir / "extraction_metadata.json").read_text())
    assert (metadata["total_input_tokens"], metadata["n_failed_documents"]) == (2152, 1)
    config = yaml.safe_load((output_dir / "config.yaml").read_text())
    assert (config["model"], config["number_format"], config["inputs"]["gold_format"]) == (
        "gpt-4o-mini",
        "en",
        "eppi",
    )


def test_the_config_threshold_is_used_unless_the_flag_overrides_it(tmp_path):
    evaluate(tmp_path / "from-config", "--config", str(FIXTURE / "config.yaml"))
    evaluate(
        tmp_path / "from-flag", "--config", str(FIXTURE / "config.yaml"), "--edit-distance-threshold", "0.9"
    )
    evaluate(tmp_path / "default")

    # "Kenia" for "Kenya": similarity 0.8, a near match at the config's 0.75, not at 0.90.
    assert comparison(tmp_path / "from-config")["1001", "102"]["match_status"] == "near_match"
    assert comparison(tmp_path / "from-flag")["1001", "102"]["match_status"] == "extraction_error_good_source"
    assert comparison(tmp_path / "default")["1001", "102"]["match_status"] == "extraction_error_good_source"
    snapshot = yaml.safe_load((tmp_path / "from-flag" / "config.yaml").read_text())
    assert snapshot["edit_distance_match_threshold"] == 0.9
    assert (
        yaml.safe_load((tmp_path / "from-config" / "config.yaml").read_text())[
            "edit_distance_match_threshold"
        ]
        == 0.75
    )


def test_native_jsonl_gold_scores_exactly_like_the_eppi_export(tmp_path):
    evaluate(tmp_path / "eppi", "--run-id", "same")
    evaluate(tmp_path / "jsonl", "--run-id", "same", gold="gold.jsonl")

    for name in ("goldstandard_llm_comparison.csv", "metrics.csv", "metrics.json"):
        assert (tmp_path / "eppi" / name).read_text() == (tmp_path / "jsonl" / name).read_text(), name


def test_custom_metrics_add_their_columns(tmp_path):
    evaluate(tmp_path / "run", "--custom-metric", "matthews_corrcoef", "cohen_kappa_score")

    header = (tmp_path / "run" / "metrics.csv").read_text().splitlines()[0].split(",")
    assert {"matthews_corrcoef", "cohen_kappa_score_given_prediction"} <= set(header)


def test_bad_predictions_exit_with_status_2_name_file_line_and_field_and_write_nothing(tmp_path):
    predictions = tmp_path / "llm.jsonl"
    predictions.write_text('{"document_id": "1001", "context": 5}\n{"document_id": "9999", "context": ""}\n')
    output_dir = tmp_path / "out"

    finished = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "evaluate_extraction",
            "--gold",
            str(FIXTURE / "gold_eppi.json"),
            "--prompts",
            str(FIXTURE / "prompts.csv"),
            "--predictions",
            str(predictions),
            "--output-dir",
            str(output_dir),
        ],
        cwd=PROJECT_ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "evalproject.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert finished.returncode == 2, finished.stderr
    assert f"{predictions}:1, document '1001', field 'context'" in finished.stderr
    assert f"{predictions}:2, document '9999', field 'document_id'" in finished.stderr
    assert "not in the gold" in finished.stderr
    assert not output_dir.exists()
    assert [path.name for path in tmp_path.iterdir()] == ["llm.jsonl"]


def test_a_bad_config_value_names_the_config_file_line_and_key(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("model: m\nedit_distance_match_threshold: high\nnumber_format: fr\n")

    with pytest.raises(CommandError) as raised:
        evaluate(tmp_path / "out", "--config", str(config))

    assert raised.value.returncode == 2
    message = str(raised.value)
    assert f"{config}:2, field 'edit_distance_match_threshold': must be a number between 0 and 1" in message
    assert f"{config}:3, field 'number_format'" in message
    assert not (tmp_path / "out").exists()


def test_an_unknown_custom_metric_and_a_malformed_config_are_bad_input(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("model: [unclosed\n")

    with pytest.raises(CommandError) as metric:
        evaluate(tmp_path / "a", "--custom-metric", "not_a_metric")
    with pytest.raises(CommandError) as yaml_error:
        evaluate(tmp_path / "b", "--config", str(config))

    assert metric.value.returncode == 2 and "'--custom-metric'" in str(metric.value)
    assert yaml_error.value.returncode == 2 and f"{config}:2" in str(yaml_error.value)
    assert list(tmp_path.iterdir()) == [config]


def test_an_existing_run_folder_is_refused_and_left_as_it_was(tmp_path):
    output_dir = tmp_path / "run"
    output_dir.mkdir()
    (output_dir / "metrics.csv").write_text("earlier")

    with pytest.raises(CommandError) as raised:
        evaluate(output_dir)

    assert raised.value.returncode == 2 and "already exists" in str(raised.value)
    assert [path.name for path in output_dir.iterdir()] == ["metrics.csv"]


def test_a_missing_input_file_is_bad_input(tmp_path):
    with pytest.raises(CommandError) as raised:
        evaluate(tmp_path / "out", gold="nowhere.json")

    assert raised.value.returncode == 2 and "nowhere.json" in str(raised.value)


def test_problems_of_every_input_file_are_reported_together():
    with pytest.raises(InputValidationError) as raised:
        read_extraction_inputs(
            gold=InMemorySource("gold.json", (FIXTURE / "gold_eppi.json").read_bytes()),
            prompts=InMemorySource(
                "prompts.csv",
                b"prompt,output_data_type,attribute_id,attribute_label\nQ,text,101,Randomised\n",
            ),
            predictions=InMemorySource("llm.jsonl", b'{"document_id": "1001", "context": 3}\n'),
        )

    assert [(p.file, p.line, p.field) for p in raised.value.problems] == [
        ("prompts.csv", 2, "output_data_type"),
        ("llm.jsonl", 1, "context"),
    ]


def test_settings_come_from_the_flag_then_the_config_then_the_default(tmp_path):
    config_path = tmp_path / "config.yaml"
    config_path.write_text(
        "number_format: de\nedit_distance_match_threshold: 0.8\ncustom_evaluation_metrics: []\n"
    )
    config = load_config(config_path)

    from_config = resolve_settings(config)
    from_flags = resolve_settings(config, edit_distance_match_threshold=0.95, number_format="en")
    defaults = resolve_settings()

    assert (from_config.number_format, from_config.edit_distance_match_threshold) == ("de", 0.8)
    assert (from_flags.number_format, from_flags.edit_distance_match_threshold) == ("en", 0.95)
    assert (defaults.number_format, defaults.edit_distance_match_threshold, defaults.custom_metrics) == (
        "en",
        0.9,
        (),
    )


def test_a_prompt_attribute_missing_from_the_eppi_code_sets_is_warned_about():
    prompts = (FIXTURE / "prompts.csv").read_bytes() + b"Which arm?,string,999,Arm\n"

    inputs = read_extraction_inputs(
        gold=FIXTURE / "gold_eppi.json",
        prompts=InMemorySource("prompts.csv", prompts),
        predictions=FIXTURE / "llm.jsonl",
    )

    (warning,) = [problem for problem in inputs.warnings if problem.field == "CodeSets"]
    assert warning.file.endswith("gold_eppi.json")
    assert "attribute '999' (Arm) is in no EPPI code set" in warning.message


def evaluate_in_memory(predictions: bytes):
    inputs = read_extraction_inputs(
        gold=FIXTURE / "gold_eppi.json",
        prompts=FIXTURE / "prompts.csv",
        predictions=InMemorySource("llm.jsonl", predictions),
    )
    run = compare_extraction_inputs(inputs, run_id="r", settings=resolve_settings())
    return {(row.document_id, row.attribute_id): row for row in run.rows}


def test_a_gold_document_without_a_prediction_line_is_a_failed_extraction():
    only_1001 = (FIXTURE / "llm.jsonl").read_bytes().splitlines(keepends=True)[0]

    rows = evaluate_in_memory(only_1001)

    row = rows["1002", "102"]
    assert (row.llm_extraction, row.match_status.value) == (None, "missing_prediction")
    assert row.llm_reasoning == "no prediction was posted for this document"


def test_two_values_for_one_attribute_are_a_missing_prediction_with_the_reason_kept():
    line = {
        "document_id": "1001",
        "context": "Conducted in Kenya.",
        "annotations": [
            {"attribute_id": "102", "output_data": "Kenya"},
            {"attribute_id": "102", "output_data": "Uganda"},
        ],
    }

    rows = evaluate_in_memory(json.dumps(line).encode() + b"\n")

    row = rows["1001", "102"]
    assert (row.llm_extraction, row.match_status.value) == (None, "missing_prediction")
    assert "2 values" in row.llm_reasoning and "'Uganda'" in row.llm_reasoning


def test_predictions_without_context_are_evaluated_with_blank_source_cells_and_a_warning(tmp_path):
    lines = [json.loads(line) for line in (FIXTURE / "llm.jsonl").read_text(encoding="utf-8").splitlines()]
    by_id = {line["document_id"]: line for line in lines}
    by_id["1001"]["context"] = None  # null
    del by_id["1002"]["context"]  # absent
    predictions = tmp_path / "llm.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    output_dir = tmp_path / "run"

    evaluate(output_dir, predictions=predictions)

    rows = comparison(output_dir)
    for document in ("1001", "1002"):
        for attribute in ("102", "103", "104"):
            row = rows[document, attribute]
            assert row["gold_value_in_context"] == ""
            assert row["human_verbatim_fuzzy_match_pct"] == row["llm_verbatim_fuzzy_match_pct"] == ""
            assert row["match_status"]
    # The failed extraction (1003) reads as before: an empty context, not a missing one.
    assert rows["1003", "102"]["gold_value_in_context"] == "False"
    log = (output_dir / "evaluation.log").read_text(encoding="utf-8")
    assert "2 document(s) have a prediction without a context" in log
    metrics = json.loads((output_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics
