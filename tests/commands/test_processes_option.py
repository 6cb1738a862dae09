"""`--processes N` on the offline commands (evaluate_spans, evaluate_extraction, compare_runs): the
chunks are scored by a local pool of N processes, and every output file is byte for byte the one a
single process writes. A value below 1 is refused with exit status 2, naming the option."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from bench.spans.corpus import write_corpus
from metrics.pipeline import extraction_files
from metrics.pipeline import spans as span_pipeline

EXTRACTION = Path(__file__).resolve().parents[1] / "data" / "extraction"
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several chunks even on these small inputs."""
    monkeypatch.setattr(span_pipeline, "CHUNK_DOCUMENTS", 9)
    monkeypatch.setattr(extraction_files, "CHUNK_DOCUMENTS", 1)


def command(name: str, *arguments: str) -> None:
    call_command(name, *arguments, stdout=io.StringIO(), stderr=io.StringIO())


def extraction_arguments(predictions: Path) -> list[str]:
    """evaluate_extraction's arguments on the test gold, prompts and config, but the output folder."""
    return [
        "--gold",
        str(EXTRACTION / "gold_eppi.json"),
        "--prompts",
        str(EXTRACTION / "prompts.csv"),
        "--predictions",
        str(predictions),
        "--config",
        str(EXTRACTION / "config.yaml"),
        "--run-id",
        "r",
    ]


def test_evaluate_spans_writes_the_same_results_with_two_processes(tmp_path: Path) -> None:
    gold, predictions, _, _ = write_corpus(tmp_path, 60, seed=4)
    common = ["--input", str(gold), "--predictions", str(predictions), "--resamples", "50"]
    command("evaluate_spans", *common, "--output", str(tmp_path / "one.json"))
    command("evaluate_spans", *common, "--output", str(tmp_path / "two.json"), "--processes", "2")
    assert (tmp_path / "two.json").read_bytes() == (tmp_path / "one.json").read_bytes()


def test_evaluate_extraction_writes_the_same_artefacts_with_two_processes(tmp_path: Path) -> None:
    common = extraction_arguments(EXTRACTION / "llm.jsonl")
    command("evaluate_extraction", *common, "--output-dir", str(tmp_path / "one"))
    command("evaluate_extraction", *common, "--output-dir", str(tmp_path / "two"), "--processes", "2")
    names = sorted(path.name for path in (tmp_path / "one").iterdir())
    assert names == sorted(path.name for path in (tmp_path / "two").iterdir())
    for name in names:
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name


def test_compare_runs_writes_the_same_comparison_with_two_processes(tmp_path: Path) -> None:
    gold, predictions, _, _ = write_corpus(tmp_path, 40, seed=5)
    common = ["--kind", "spans", "--gold", str(gold), "--a", str(predictions), "--b", str(predictions)]
    command("compare_runs", *common, "--resamples", "50", "--output", str(tmp_path / "one.json"))
    command(
        "compare_runs",
        *common,
        "--resamples",
        "50",
        "--output",
        str(tmp_path / "two.json"),
        "--processes",
        "2",
    )
    assert (tmp_path / "two.json").read_bytes() == (tmp_path / "one.json").read_bytes()


@pytest.mark.parametrize("value", ["0", "two"])
def test_a_process_count_below_one_or_not_a_number_exits_with_status_2(tmp_path: Path, value: str) -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "evaluate_spans",
            "--input",
            "gold.jsonl",
            "--predictions",
            "predictions.jsonl",
            "--output",
            str(tmp_path / "results.json"),
            "--processes",
            value,
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert "--processes" in completed.stderr
    assert not (tmp_path / "results.json").exists()


def test_documents_without_context_are_counted_in_one_warning_whatever_the_processes(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in (EXTRACTION / "llm.jsonl").read_text(encoding="utf-8").splitlines()]
    lines[0]["context"] = None
    del lines[1]["context"]
    predictions = tmp_path / "llm.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    common = extraction_arguments(predictions)
    command("evaluate_extraction", *common, "--output-dir", str(tmp_path / "one"))
    command("evaluate_extraction", *common, "--output-dir", str(tmp_path / "two"), "--processes", "2")

    for name in ("goldstandard_llm_comparison.csv", "evaluation.log", "metrics.json"):
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
    log = (tmp_path / "two" / "evaluation.log").read_text(encoding="utf-8")
    assert log.count("document(s) have a prediction without a context") == 1
    assert "2 document(s) have a prediction without a context" in log
