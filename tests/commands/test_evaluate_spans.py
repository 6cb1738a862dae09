"""`manage.py evaluate_spans`: from span files to results.json, with leakage shown first."""

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
DATA = PROJECT_ROOT / "tests" / "data" / "spans"
GOLD = DATA / "gold.jsonl"
PREDICTIONS = DATA / "predictions.jsonl"


class TerminalStream(io.StringIO):
    """A captured stream that says it is a terminal, as stderr is in an interactive shell."""

    def isatty(self) -> bool:
        return True


def run(*arguments: str, stderr: io.StringIO | None = None) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), stderr or io.StringIO()
    call_command("evaluate_spans", *arguments, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


def run_process(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "evaluate_spans", *arguments],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )


def test_it_writes_results_with_the_contract_keys(tmp_path: Path) -> None:
    output = tmp_path / "results.json"
    run("--input", str(GOLD), "--predictions", str(PREDICTIONS), "--output", str(output))
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["format_version"] == 1
    assert results["documents"] == 3
    assert results["config"]["input"] == str(GOLD)
    assert results["config"]["predictions"] == str(PREDICTIONS)
    assert set(results["micro"]["chars"]["all"]) >= {"tp", "fp", "fn", "tn", "precision", "recall", "f1"}
    assert results["leakage"]["any_char"]["documents_leaked"] == 1
    assert results["leakage"]["any_char"]["leaked_document_ids"] == ["letter-2"]
    assert results["restricted_predictions_dropped"] == 0
    assert [warning["field"] for warning in results["warnings"]] == ["entity_type"]
    assert "'Klinik'" in results["warnings"][0]["message"]


def test_the_summary_shows_leakage_before_precision(tmp_path: Path) -> None:
    stdout, _ = run(
        "--input", str(GOLD), "--predictions", str(PREDICTIONS), "--output", str(tmp_path / "results.json")
    )
    assert stdout.index("LEAKAGE") < stdout.index("precision")
    for condition in ("any_char", "any_char_scored", "entity_missed"):
        assert condition in stdout
    assert "33.3%" in stdout  # one of three documents leaked
    assert f"Results written to {tmp_path / 'results.json'}" in stdout


def test_warnings_are_printed_and_the_run_goes_on(tmp_path: Path) -> None:
    output = tmp_path / "results.json"
    _, stderr = run("--input", str(GOLD), "--predictions", str(PREDICTIONS), "--output", str(output))
    assert "warning:" in stderr and "unknown label 'Klinik' mapped to OTHER_PII" in stderr
    assert output.exists()


def test_options_reach_the_results(tmp_path: Path) -> None:
    label_map = tmp_path / "map.json"
    label_map.write_text('{"klinik": "ORGANIZATION"}', encoding="utf-8")
    output = tmp_path / "results.json"
    stdout, _ = run(
        "--input", str(GOLD), "--predictions", str(PREDICTIONS), "--output", str(output),
        "--label-map", str(label_map), "--restrict-to-gt-types", "--include-sensitive-text",
    )  # fmt: skip
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["config"]["label_map"] == str(label_map)
    assert results["config"]["restrict_to_gt_types"] is True
    assert results["config"]["include_sensitive_text"] is True
    assert results["warnings"] == []
    # OTHER_DATE never occurs in gold, so the prediction of that type is dropped and counted.
    assert results["restricted_predictions_dropped"] == 1
    assert "Predictions dropped by --restrict-to-gt-types: 1" in stdout


def test_invalid_input_exits_with_status_2_lists_the_problems_and_writes_nothing(tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        '{"document_id": "letter-1", "entities": [{"start": 30, "end": 99, "entity_type": "AGE"}]}\n'
        '{"document_id": "letter-9", "entities": []}\n'
        "{oops\n",
        encoding="utf-8",
    )
    output = tmp_path / "results.json"
    finished = run_process("--input", str(GOLD), "--predictions", str(predictions), "--output", str(output))
    assert finished.returncode == 2
    assert not output.exists()
    assert list(tmp_path.iterdir()) == [predictions]  # no temporary file left behind either
    assert "invalid input, 3 problems found; no results written" in finished.stderr
    assert f"{predictions}:1, document 'letter-1', field 'entities[0].end'" in finished.stderr
    assert f"{predictions}:2, document 'letter-9', field 'document_id'" in finished.stderr
    assert f"{predictions}:3: malformed JSON" in finished.stderr


def test_invalid_input_raises_a_command_error_with_status_2(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        '{"document_id": "a", "text": "Max", "entities": [{"start": 0, "end": 3}]}\n', encoding="utf-8"
    )
    with pytest.raises(CommandError) as raised:
        run("--input", str(gold), "--predictions", str(PREDICTIONS), "--output", str(tmp_path / "r.json"))
    assert raised.value.returncode == 2
    assert "field 'entities[0].entity_type'" in str(raised.value)
    assert not (tmp_path / "r.json").exists()


def test_several_gold_annotators_need_gold_annotator(tmp_path: Path) -> None:
    export = tmp_path / "export"
    for annotator in ("alice", "bob"):
        folder = export / "annotation" / "letter-1.txt"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{annotator}.json").write_text(
            json.dumps(
                {
                    "%FEATURE_STRUCTURES": [
                        {
                            "%ID": 1,
                            "%TYPE": "uima.cas.Sofa",
                            "sofaID": "_InitialView",
                            "sofaString": "Max Muster",
                        },
                        {"%ID": 2, "%TYPE": "custom.Span", "@sofa": 1, "begin": 0, "end": 3, "label": "name"},
                    ]
                }
            ),
            encoding="utf-8",
        )
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text('{"document_id": "letter-1", "entities": []}\n', encoding="utf-8")
    output = tmp_path / "results.json"
    with pytest.raises(CommandError, match=r"several annotators \(alice, bob\).*--gold-annotator") as raised:
        run("--input", str(export), "--predictions", str(predictions), "--output", str(output))
    assert raised.value.returncode == 2
    run(
        "--input",
        str(export),
        "--predictions",
        str(predictions),
        "--output",
        str(output),
        "--gold-annotator",
        "bob",
    )
    assert json.loads(output.read_text(encoding="utf-8"))["config"]["gold_annotator"] == "bob"


def test_a_missing_output_folder_is_reported_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist") as raised:
        run(
            "--input",
            str(GOLD),
            "--predictions",
            str(PREDICTIONS),
            "--output",
            str(tmp_path / "no" / "r.json"),
        )
    assert raised.value.returncode == 2


def test_a_progress_bar_is_drawn_only_on_a_terminal(tmp_path: Path) -> None:
    arguments = (
        "--input",
        str(GOLD),
        "--predictions",
        str(PREDICTIONS),
        "--output",
        str(tmp_path / "r.json"),
        "--overwrite",
    )
    _, plain = run(*arguments)
    _, terminal = run(*arguments, stderr=TerminalStream())
    assert "scoring [" not in plain
    assert "scoring [" in terminal and "3/3 documents" in terminal


def test_the_help_explains_inputs_annotators_and_exit_status() -> None:
    finished = run_process("--help")
    assert finished.returncode == 0
    for phrase in (
        "--gold-annotator NAME",
        "annotation/<document>/<user>.json",
        "exit status 2",
        "--label-map",
    ):
        assert phrase in finished.stdout


def test_results_json_is_indented_with_one_line_per_document(tmp_path: Path) -> None:
    output = tmp_path / "results.json"
    run("--input", str(GOLD), "--predictions", str(PREDICTIONS), "--output", str(output))
    lines = output.read_text(encoding="utf-8").splitlines()
    assert lines[1] == '  "format_version": 1,'
    per_document = [line for line in lines if line.startswith('    {"document_id": "letter-')]
    assert len(per_document) == 3
    assert [json.loads(line.rstrip(","))["document_id"] for line in per_document] == [
        "letter-1",
        "letter-2",
        "letter-3",
    ]
