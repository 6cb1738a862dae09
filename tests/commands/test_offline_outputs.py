"""Every offline command treats an existing output the same way, and writes with the same modes.

An existing output (a file, or a folder that is not empty) is refused with exit status 2 and one line
unless --overwrite is given; outputs are 0644 files (in 0755 folders) whatever the umask.
"""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotations.importers.errors import ImportProblem, InputValidationError
from metrics.management.offline_files import write_json_report

DATA = Path(__file__).resolve().parents[1] / "data"
SPAN_GOLD, SPAN_PREDICTIONS = DATA / "spans" / "gold.jsonl", DATA / "spans" / "predictions.jsonl"
EXTRACTION = DATA / "extraction"


def evaluate_spans(output: Path, *extra: str) -> None:
    call_command(
        "evaluate_spans",
        *("--gold", str(SPAN_GOLD), "--predictions", str(SPAN_PREDICTIONS), "--output", str(output)),
        *("--resamples", "0", *extra),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )


def evaluate_extraction(output: Path, *extra: str) -> None:
    call_command(
        "evaluate_extraction",
        *("--gold", str(EXTRACTION / "gold_eppi.json"), "--prompts", str(EXTRACTION / "prompts.csv")),
        *("--predictions", str(EXTRACTION / "llm.jsonl"), "--output-dir", str(output)),
        *("--resamples", "0", *extra),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )


def compare_runs(output: Path, *extra: str) -> None:
    call_command(
        "compare_runs",
        *("--kind", "spans", "--gold", str(SPAN_GOLD), "--a", str(SPAN_PREDICTIONS)),
        *("--b", str(SPAN_PREDICTIONS), "--output", str(output), "--resamples", "20", *extra),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )


COMMANDS: dict[str, tuple[Callable[..., None], str]] = {
    "evaluate_spans": (evaluate_spans, "results.json"),
    "evaluate_extraction": (evaluate_extraction, "run"),
    "compare_runs": (compare_runs, "comparison.json"),
}


@pytest.fixture(params=sorted(COMMANDS))
def command(request) -> tuple[Callable[..., None], str]:
    return COMMANDS[request.param]


@pytest.fixture
def private_umask() -> Iterator[None]:
    previous = os.umask(0o077)
    yield
    os.umask(previous)


def _modes(output: Path) -> set[int]:
    paths = [output, *output.rglob("*")] if output.is_dir() else [output]
    return {stat.S_IMODE(path.stat().st_mode) for path in paths if path.is_file()}


def test_every_command_refuses_an_existing_output_in_one_line(command, tmp_path):
    run, name = command
    output = tmp_path / name
    run(output)
    with pytest.raises(CommandError) as refused:
        run(output)
    assert refused.value.returncode == 2
    assert str(refused.value) == f"{output} already exists; add --overwrite to replace it (nothing written)"


def test_every_command_replaces_an_existing_output_with_overwrite(command, tmp_path):
    run, name = command
    output = tmp_path / name
    run(output)
    stale = output / "stale.txt" if output.is_dir() else None
    if stale is not None:
        stale.write_text("from an earlier run")
    before = output.stat().st_mtime_ns
    run(output, "--overwrite")
    assert output.stat().st_mtime_ns >= before
    assert stale is None or not stale.exists()


def test_every_command_writes_0644_files_whatever_the_umask(command, tmp_path, private_umask):
    run, name = command
    output = tmp_path / name
    run(output)
    assert _modes(output) == {0o644}
    if output.is_dir():
        assert stat.S_IMODE(output.stat().st_mode) == 0o755


def test_a_failed_overwrite_keeps_the_previous_output(tmp_path):
    output = tmp_path / "run"
    evaluate_extraction(output)
    before = sorted(path.name for path in output.iterdir())
    with pytest.raises(CommandError) as failed:
        call_command(
            "evaluate_extraction",
            *("--gold", str(EXTRACTION / "gold_eppi.json"), "--prompts", str(EXTRACTION / "prompts.csv")),
            *("--predictions", str(tmp_path / "absent.jsonl"), "--output-dir", str(output), "--overwrite"),
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    assert failed.value.returncode == 2
    assert sorted(path.name for path in output.iterdir()) == before
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []


def test_an_empty_output_folder_is_not_taken(tmp_path):
    output = tmp_path / "run"
    output.mkdir()
    evaluate_extraction(output)
    assert (output / "metrics.json").exists()


def test_a_report_of_invalid_input_is_refused_with_every_problem_counted_and_nothing_written(tmp_path):
    output = tmp_path / "report.json"

    def invalid():
        raise InputValidationError([ImportProblem("bad offsets", line=3), ImportProblem("no text", line=4)])

    with pytest.raises(CommandError) as refused:
        write_json_report(output, invalid, overwrite=False, nothing_written="no report written")

    assert refused.value.returncode == 2
    assert str(refused.value).startswith("invalid input, 2 problems found; no report written:")
    assert not output.exists()


def test_a_report_is_written_whole_with_the_output_mode(tmp_path):
    output = tmp_path / "report.json"

    report = write_json_report(output, lambda: {"documents": 2}, overwrite=False)

    assert report == {"documents": 2}
    assert json.loads(output.read_text()) == {"documents": 2}
    assert stat.S_IMODE(output.stat().st_mode) == 0o644
