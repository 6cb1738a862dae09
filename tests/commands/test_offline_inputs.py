"""An offline command given a file of the wrong kind says so in one line, with exit status 2.

The kind comes from the project's format sniffer: an EPPI export, a UIMA CAS file, a prompt CSV, span
JSONL, attribute gold JSONL or extraction predictions JSONL.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DATA = PROJECT_ROOT / "tests" / "data"
SPAN_GOLD, SPAN_PREDICTIONS = DATA / "spans" / "gold.jsonl", DATA / "spans" / "predictions.jsonl"
EXTRACTION = DATA / "extraction"
EPPI, ATTRIBUTE_GOLD = EXTRACTION / "gold_eppi.json", EXTRACTION / "gold.jsonl"
PROMPTS, EXTRACTION_PREDICTIONS = EXTRACTION / "prompts.csv", EXTRACTION / "llm.jsonl"


def manage(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )


def refusal(command: str, *arguments: str) -> CommandError:
    with pytest.raises(CommandError) as refused:
        call_command(command, *arguments, stdout=io.StringIO(), stderr=io.StringIO())
    assert refused.value.returncode == 2
    assert "\n" not in str(refused.value)
    return refused.value


def test_an_eppi_export_given_to_evaluate_spans_is_named_in_one_line(tmp_path):
    output = tmp_path / "results.json"
    finished = manage(
        "evaluate_spans", "--gold", str(EPPI), "--predictions", str(SPAN_PREDICTIONS), "--output", str(output)
    )
    assert finished.returncode == 2
    assert finished.stderr.strip().splitlines() == [
        f"CommandError: --gold {EPPI}: this is an EPPI Reviewer export (attribute gold), not span data "
        "(span JSONL or INCEpTION CAS JSON); nothing written"
    ]
    assert not output.exists()


def test_extraction_predictions_given_as_span_predictions_are_named(tmp_path):
    error = refusal(
        "evaluate_spans",
        *("--gold", str(SPAN_GOLD), "--predictions", str(EXTRACTION_PREDICTIONS)),
        *("--output", str(tmp_path / "results.json")),
    )
    assert "--predictions" in str(error) and "an extraction predictions JSONL file" in str(error)


@pytest.mark.parametrize(
    ("option", "wrong", "named"),
    [
        ("--gold", SPAN_GOLD, "a span JSONL file"),
        ("--predictions", SPAN_PREDICTIONS, "a span JSONL file"),
        ("--prompts", ATTRIBUTE_GOLD, "an attribute gold JSONL file"),
        ("--gold", PROMPTS, "a prompt CSV"),
    ],
)
def test_evaluate_extraction_names_an_input_of_the_wrong_kind(tmp_path, option, wrong, named):
    inputs = {"--gold": EPPI, "--prompts": PROMPTS, "--predictions": EXTRACTION_PREDICTIONS, option: wrong}
    arguments = [part for name, path in inputs.items() for part in (name, str(path))]
    error = refusal("evaluate_extraction", *arguments, "--output-dir", str(tmp_path / "run"))
    assert str(error).startswith(f"{option} {wrong}: this is {named}, not ")
    assert not (tmp_path / "run").exists()


def test_compare_runs_names_an_input_of_the_wrong_kind(tmp_path):
    error = refusal(
        "compare_runs",
        *("--kind", "attributes", "--gold", str(SPAN_GOLD), "--prompts", str(PROMPTS)),
        *("--a", str(EXTRACTION_PREDICTIONS), "--b", str(EXTRACTION_PREDICTIONS)),
        *("--output", str(tmp_path / "comparison.json")),
    )
    assert str(error).startswith(f"--gold {SPAN_GOLD}: this is a span JSONL file, not attribute gold")


def test_both_attribute_gold_formats_are_accepted_as_extraction_gold(tmp_path):
    for index, gold in enumerate((EPPI, ATTRIBUTE_GOLD)):
        call_command(
            "evaluate_extraction",
            *("--gold", str(gold), "--prompts", str(PROMPTS), "--predictions", str(EXTRACTION_PREDICTIONS)),
            *("--output-dir", str(tmp_path / f"run-{index}"), "--resamples", "0"),
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
        assert (tmp_path / f"run-{index}" / "metrics.json").exists()


def test_evaluate_spans_takes_gold_with_input_as_its_former_name(tmp_path):
    results = {}
    for option in ("--gold", "--input"):
        output = tmp_path / f"results{option}.json"
        call_command(
            "evaluate_spans",
            *(option, str(SPAN_GOLD), "--predictions", str(SPAN_PREDICTIONS), "--output", str(output)),
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
        results[option] = json.loads(output.read_text())
    assert results["--gold"]["micro"] == results["--input"]["micro"]
    assert results["--gold"]["config"]["input"] == str(SPAN_GOLD)
