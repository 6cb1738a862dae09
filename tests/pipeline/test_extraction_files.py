"""The files path of the offline extraction evaluation (`metrics.pipeline.extraction_files`): an
EPPI export and its predictions read, scored and written in chunks by whoever scores them.

Whatever the chunking and the number of processes, the artefact folder is byte for byte the one the
validating readers' path writes; and where the files path is not sure of its inputs, that path
takes over, with its own results, warnings and errors.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from annotations.importers.errors import InputValidationError
from annotations.importers.prompts_csv import read_prompts_csv
from bench.extraction.workload import generate
from metrics.pipeline import extraction_files, extraction_folder
from metrics.pipeline.extraction_evaluation import (
    load_config,
    read_extraction_inputs,
    resolve_settings,
)
from metrics.pipeline.extraction_folder import evaluate_extraction_to_folder
from metrics.pipeline.intervals import IntervalSettings

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "extraction"
INTERVALS = IntervalSettings(resamples=50)


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small bench workload: EPPI gold with citations, predictions with every kind of error."""
    directory = tmp_path_factory.mktemp("workload")
    generate(directory, documents=120, seed=3)
    return directory


def evaluate(inputs: Path, output: Path, *, processes: int = 1, predictions: Path | None = None, **settings):
    config = load_config(inputs / "config.yaml")
    return evaluate_extraction_to_folder(
        gold=inputs / "gold_eppi.json",
        prompts=inputs / "prompts.csv",
        predictions=predictions or inputs / "llm.jsonl",
        output_dir=output,
        run_id="r",
        settings=resolve_settings(config, **settings),
        config=config,
        intervals=INTERVALS,
        processes=processes,
    )


def validating_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extraction_folder, "plan_extraction_file_chunks", lambda **_: None)


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The runs read whole by the validating readers (by their gold file): none on the files path."""
    reads: list[str] = []
    read = extraction_folder.read_extraction_inputs

    def counted(**sources):
        reads.append(str(sources["gold"]))
        return read(**sources)

    monkeypatch.setattr(extraction_folder, "read_extraction_inputs", counted)
    return reads


def files_of(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.mark.parametrize("chunk_documents", [1, 7, 2_500])
@pytest.mark.parametrize(
    "evaluation_settings",
    [
        {},
        {
            "edit_distance_match_threshold": 0.5,
            "number_format": "de",
            "custom_metrics": ["balanced_accuracy_score"],
        },
    ],
)
def test_the_artefacts_are_those_of_the_validating_readers_whatever_the_chunking(
    workload: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    chunk_documents: int,
    evaluation_settings: dict,
    whole_reads: list[str],
) -> None:
    monkeypatch.setattr(extraction_files, "CHUNK_DOCUMENTS", chunk_documents)
    evaluate(workload, tmp_path / "files", **evaluation_settings)
    assert not whole_reads  # the files path took it
    with monkeypatch.context() as patch:
        validating_path(patch)
        evaluate(workload, tmp_path / "whole", **evaluation_settings)
    assert len(whole_reads) == 1
    assert files_of(tmp_path / "files") == files_of(tmp_path / "whole")


def test_two_processes_write_the_same_artefacts(
    workload: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole_reads: list[str]
) -> None:
    monkeypatch.setattr(extraction_files, "CHUNK_DOCUMENTS", 13)
    evaluate(workload, tmp_path / "one")
    evaluate(workload, tmp_path / "two", processes=2)
    assert not whole_reads
    assert files_of(tmp_path / "two") == files_of(tmp_path / "one")


def test_two_processes_write_the_same_artefacts_from_inputs_read_whole(
    workload: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole_reads: list[str]
) -> None:
    monkeypatch.setattr(extraction_files, "CHUNK_DOCUMENTS", 13)
    evaluate(workload, tmp_path / "one")
    validating_path(monkeypatch)
    evaluate(workload, tmp_path / "two", processes=2)
    assert len(whole_reads) == 1
    assert files_of(tmp_path / "two") == files_of(tmp_path / "one")


def test_documents_read_whole_are_chunked_in_order_each_with_the_predictions_of_its_documents(
    workload: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extraction_files, "CHUNK_DOCUMENTS", 7)
    inputs = read_extraction_inputs(
        gold=workload / "gold_eppi.json", prompts=workload / "prompts.csv", predictions=workload / "llm.jsonl"
    )
    predictions = inputs.predictions.documents
    chunks = extraction_files.document_chunks(inputs, run_id="r", settings=resolve_settings())
    assert len(chunks) > 1
    assert [document for chunk in chunks for document in chunk.gold_documents] == inputs.gold.documents
    assert [document_id for chunk in chunks for document_id in chunk.lines] == list(predictions)
    for chunk in chunks:
        own = {document.document_id for document in chunk.gold_documents} & set(predictions)
        assert chunk.predictions == {document_id: predictions[document_id] for document_id in own}


def test_a_chunk_given_a_parts_folder_leaves_its_two_large_parts_there_as_files(
    workload: Path, tmp_path: Path
) -> None:
    """A pool's worker writes its parts of the comparison CSV and llm_annotations.json to files
    instead of pickling them to the evaluating process; they hold the bytes it would return."""
    config = load_config(workload / "config.yaml")
    plan = extraction_files.plan_extraction_file_chunks(
        gold=workload / "gold_eppi.json",
        predictions=workload / "llm.jsonl",
        gold_file="gold",
        predictions_file="predictions",
        run_id="r",
        attributes=read_prompts_csv(workload / "prompts.csv").attributes,
        settings=resolve_settings(config),
    )
    assert plan is not None
    (chunk,) = plan.chunks
    returned = extraction_files.score_extraction_chunk(chunk)
    left = extraction_files.score_extraction_chunk(replace(chunk, parts_folder=str(tmp_path)))
    assert returned is not None and left is not None
    assert isinstance(left.comparison_csv, Path) and isinstance(left.llm_annotations, Path)
    assert left.comparison_csv.read_bytes() == returned.comparison_csv
    assert left.llm_annotations.read_bytes() == returned.llm_annotations
    assert sorted(tmp_path.iterdir()) == sorted([left.comparison_csv, left.llm_annotations])


def test_the_test_fixture_gives_the_artefacts_of_the_validating_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole_reads: list[str]
) -> None:
    monkeypatch.setattr(extraction_files, "CHUNK_DOCUMENTS", 1)
    run = evaluate(FIXTURE, tmp_path / "files")
    assert not whole_reads  # the export's warning (two codes merged) came through
    assert any("merged into one" in str(problem) for problem in run.inputs.warnings)
    validating_path(monkeypatch)
    evaluate(FIXTURE, tmp_path / "whole")
    assert files_of(tmp_path / "files") == files_of(tmp_path / "whole")


def rewritten_predictions(workload: Path, tmp_path: Path, change) -> Path:
    lines = (workload / "llm.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "llm.jsonl"
    path.write_text("".join(line + "\n" for line in change(lines)), encoding="utf-8")
    return path


def shuffled(lines: list[str]) -> list[str]:
    random.Random(1).shuffle(lines)
    return lines


def with_unknown_field(lines: list[str]) -> list[str]:
    record = json.loads(lines[5])
    lines[5] = json.dumps({**record, "model_version": "v2"})
    return lines


def with_integer_id(lines: list[str]) -> list[str]:
    record = json.loads(lines[3])
    lines[3] = json.dumps({**record, "document_id": int(record["document_id"])})
    return lines


def test_an_empty_predictions_file_fails_every_document(
    workload: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole_reads: list[str]
) -> None:
    predictions = rewritten_predictions(workload, tmp_path, lambda lines: [])
    run = evaluate(workload, tmp_path / "files", predictions=predictions)
    assert not whole_reads
    assert run.n_prediction_lines == 0
    validating_path(monkeypatch)
    evaluate(workload, tmp_path / "whole", predictions=predictions)
    assert files_of(tmp_path / "files") == files_of(tmp_path / "whole")


@pytest.mark.parametrize("change", [shuffled, with_unknown_field, with_integer_id])
def test_predictions_it_is_not_sure_of_are_read_by_the_validating_reader(
    workload: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change, whole_reads: list[str]
) -> None:
    monkeypatch.setattr(extraction_files, "CHUNK_DOCUMENTS", 11)
    predictions = rewritten_predictions(workload, tmp_path, change)
    evaluate(workload, tmp_path / "files", predictions=predictions)
    assert len(whole_reads) == 1
    validating_path(monkeypatch)
    evaluate(workload, tmp_path / "whole", predictions=predictions)
    assert files_of(tmp_path / "files") == files_of(tmp_path / "whole")


def test_a_bad_prediction_line_is_worded_by_the_validating_reader(
    workload: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def with_bad_status(lines: list[str]) -> list[str]:
        lines[40] = json.dumps({**json.loads(lines[40]), "status": "maybe"})
        return lines

    predictions = rewritten_predictions(workload, tmp_path, with_bad_status)
    with pytest.raises(InputValidationError) as files_error:
        evaluate(workload, tmp_path / "files", predictions=predictions)
    validating_path(monkeypatch)
    with pytest.raises(InputValidationError) as whole_error:
        evaluate(workload, tmp_path / "whole", predictions=predictions)
    assert str(files_error.value) == str(whole_error.value)
    assert "status must be one of ok, failed" in str(files_error.value)
    assert not (tmp_path / "files").exists()


def test_a_repeated_reference_is_worded_by_the_validating_reader(
    workload: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = json.loads((workload / "gold_eppi.json").read_text(encoding="utf-8"))
    export["References"].append(export["References"][0])
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name in ("prompts.csv", "config.yaml", "llm.jsonl"):
        (inputs / name).write_bytes((workload / name).read_bytes())
    (inputs / "gold_eppi.json").write_text(json.dumps(export, indent=1), encoding="utf-8")
    with pytest.raises(InputValidationError) as files_error:
        evaluate(inputs, tmp_path / "files")
    validating_path(monkeypatch)
    with pytest.raises(InputValidationError) as whole_error:
        evaluate(inputs, tmp_path / "whole")
    assert str(files_error.value) == str(whole_error.value)
    assert "duplicate ItemId" in str(files_error.value)


def with_gold_text(workload: Path, directory: Path, text: str) -> Path:
    """A copy of the workload's inputs with `text` as its EPPI export."""
    directory.mkdir()
    for name in ("prompts.csv", "config.yaml", "llm.jsonl"):
        (directory / name).write_bytes((workload / name).read_bytes())
    (directory / "gold_eppi.json").write_text(text, encoding="utf-8")
    return directory


def titled_references(export: dict) -> str:
    export["References"][3]["Title"] = "References"
    return json.dumps(export)


def with_references_twice(export: dict) -> str:
    return '{"References": [], ' + json.dumps(export)[1:]


def with_references_in_a_note_first(export: dict) -> str:
    return json.dumps({"Note": "References", **export})


@pytest.mark.parametrize(
    ("change", "files_path"),
    [(titled_references, True), (with_references_twice, False), (with_references_in_a_note_first, False)],
)
def test_the_key_references_is_trusted_only_once_outside_the_references(
    workload: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    change,
    files_path: bool,
    whole_reads: list[str],
) -> None:
    export = json.loads((workload / "gold_eppi.json").read_text(encoding="utf-8"))
    inputs = with_gold_text(workload, tmp_path / "inputs", change(export))
    evaluate(inputs, tmp_path / "files")
    assert (not whole_reads) is files_path
    validating_path(monkeypatch)
    evaluate(inputs, tmp_path / "whole")
    assert files_of(tmp_path / "files") == files_of(tmp_path / "whole")


def test_a_chunk_holds_at_most_chunk_bytes_of_input_beyond_its_first_reference(
    workload: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extraction_files, "CHUNK_BYTES", 20_000)
    config = load_config(workload / "config.yaml")
    plan = extraction_files.plan_extraction_file_chunks(
        gold=workload / "gold_eppi.json",
        predictions=workload / "llm.jsonl",
        gold_file="gold",
        predictions_file="predictions",
        run_id="r",
        attributes=read_prompts_csv(workload / "prompts.csv").attributes,
        settings=resolve_settings(config),
    )
    assert plan is not None and len(plan.chunks) > 10
    for chunk in plan.chunks:
        predicted = 0 if chunk.predictions is None else chunk.predictions.end - chunk.predictions.start
        assert len(chunk.document_ids) == 1 or chunk.gold.end - chunk.gold.start + predicted <= 20_000
    assert [document_id for chunk in plan.chunks for document_id in chunk.document_ids] == plan.gold_ids
    evaluate(workload, tmp_path / "files")
    validating_path(monkeypatch)
    evaluate(workload, tmp_path / "whole")
    assert files_of(tmp_path / "files") == files_of(tmp_path / "whole")
