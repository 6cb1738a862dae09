"""An extraction evaluation split between two processes (metrics.extraction_shards) writes exactly the
artefacts of the one-process path, or falls back to it: same files byte for byte, same log, same
errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotations.importers.attribute_jsonl import Shard
from annotations.importers.eppi import ExportNotSplit, read_eppi_gold_part, split_references
from annotations.importers.errors import InputValidationError
from annotations.importers.extraction_predictions import quick_document_id
from bench.extraction.workload import generate
from metrics.extraction_evaluation import evaluate_extraction_to_folder, load_config, resolve_settings
from metrics.intervals import IntervalSettings

# Few resamples: the intervals are computed by the same code either way; the test is about joining.
INTERVALS = IntervalSettings(resamples=200)


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    """A bench workload: duplicate and invalid predictions, failed documents, documents with no line,
    invalid gold values, EPPI citations."""
    directory = tmp_path_factory.mktemp("workload")
    generate(directory, documents=240, seed=3)
    return directory


def evaluate(directory: Path, output: Path, *, split: bool, predictions: Path | None = None, gold=None):
    config = load_config(directory / "config.yaml")
    phases: dict[str, float] = {}
    run = evaluate_extraction_to_folder(
        gold=gold or directory / "gold_eppi.json",
        prompts=directory / "prompts.csv",
        predictions=predictions or directory / "llm.jsonl",
        output_dir=output,
        run_id="run-1",
        settings=resolve_settings(config),
        config=config,
        intervals=INTERVALS,
        phase_seconds=phases,
        split=split,
    )
    return run, phases


def was_split(phases: dict[str, float]) -> bool:
    return any(phase.startswith("half 2:") for phase in phases)


def assert_same_folders(one: Path, two: Path) -> None:
    names = sorted(path.name for path in one.iterdir())
    assert names == sorted(path.name for path in two.iterdir())
    assert len(names) == 8
    for name in names:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name


def test_a_split_run_writes_the_artefacts_of_one_process_byte_for_byte(workload, tmp_path):
    single, single_phases = evaluate(workload, tmp_path / "one", split=False)
    split, split_phases = evaluate(workload, tmp_path / "two", split=True)
    assert not was_split(single_phases)
    assert was_split(split_phases)
    assert_same_folders(tmp_path / "one", tmp_path / "two")
    assert split.log_lines() == single.log_lines()
    assert [result.metrics for result in split.evaluation.attributes] == [
        result.metrics for result in single.evaluation.attributes
    ]
    assert split.intervals == single.intervals
    # The workload has what the halves must join in order: row warnings, failures, missing lines.
    assert any("invalid predicted value" in warning for warning in single.evaluation.warnings)
    assert any("no prediction line" in line for line in single.log_lines())


def test_prediction_lines_out_of_gold_order_are_joined_in_file_order(workload, tmp_path):
    lines = (workload / "llm.jsonl").read_bytes().splitlines(keepends=True)
    shuffled = tmp_path / "shuffled.jsonl"
    # Reversed, so that every line of the second half of the gold comes before the first half's.
    shuffled.write_bytes(b"".join(reversed(lines)))
    evaluate(workload, tmp_path / "one", split=False, predictions=shuffled)
    _, phases = evaluate(workload, tmp_path / "two", split=True, predictions=shuffled)
    assert was_split(phases)
    assert_same_folders(tmp_path / "one", tmp_path / "two")


def test_a_line_whose_id_cannot_be_read_off_the_bytes_is_kept_by_its_owner(workload, tmp_path):
    records = [json.loads(line) for line in (workload / "llm.jsonl").read_text().splitlines()]
    # A nested "document_id" key in the second half: the quick reading sees two and leaves the
    # line to both halves.
    for record in records[-4:]:
        if record.get("annotations"):
            record["annotations"][0]["document_id"] = "elsewhere"
    text = "\n".join(json.dumps(record) for record in records) + "\n"
    # An escaped character in the key, in the first half: only a JSON parser reads "document_id".
    text = text.replace('{"document_id"', '{"document\\u005fid"', 3)
    unnamed = tmp_path / "unnamed.jsonl"
    unnamed.write_text(text)
    assert quick_document_id(text.splitlines()[0].encode()) is None
    evaluate(workload, tmp_path / "one", split=False, predictions=unnamed)
    _, phases = evaluate(workload, tmp_path / "two", split=True, predictions=unnamed)
    assert was_split(phases)
    assert_same_folders(tmp_path / "one", tmp_path / "two")


@pytest.mark.parametrize("position", ["first half", "second half"])
def test_bad_input_in_either_half_raises_the_one_process_error_and_writes_nothing(
    workload, tmp_path, position
):
    lines = (workload / "llm.jsonl").read_text().splitlines()
    index = 3 if position == "first half" else len(lines) - 3
    lines[index] = lines[index].replace('"context"', '"context": 12, "was"', 1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputValidationError) as single:
        evaluate(workload, tmp_path / "one", split=False, predictions=bad)
    with pytest.raises(InputValidationError) as split:
        evaluate(workload, tmp_path / "two", split=True, predictions=bad)
    assert str(split.value) == str(single.value)
    assert f"bad.jsonl:{index + 1}," in str(split.value)
    assert not (tmp_path / "two").exists()
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []


def test_a_warning_only_the_whole_file_can_place_sends_the_run_to_one_process(workload, tmp_path):
    records = [json.loads(line) for line in (workload / "llm.jsonl").read_text().splitlines()]
    records[-2]["model_version"] = "v2"  # an unknown field: reported once, at its first line
    odd = tmp_path / "odd.jsonl"
    odd.write_text("\n".join(json.dumps(record) for record in records) + "\n")
    single, _ = evaluate(workload, tmp_path / "one", split=False, predictions=odd)
    split, phases = evaluate(workload, tmp_path / "two", split=True, predictions=odd)
    assert not was_split(phases)
    assert_same_folders(tmp_path / "one", tmp_path / "two")
    assert any("unknown field" in line for line in split.log_lines())


def test_duplicate_codes_in_the_second_half_are_warned_about_in_gold_order(workload, tmp_path):
    export = json.loads((workload / "gold_eppi.json").read_text())
    for reference in (export["References"][5], export["References"][-5]):
        reference["Codes"].append(dict(reference["Codes"][-1]))
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(export))
    single, _ = evaluate(workload, tmp_path / "one", split=False, gold=gold)
    split, phases = evaluate(workload, tmp_path / "two", split=True, gold=gold)
    assert was_split(phases)
    assert_same_folders(tmp_path / "one", tmp_path / "two")
    assert sum("duplicate" in line for line in split.log_lines()) >= 2


def test_jsonl_gold_is_evaluated_in_one_process(tmp_path):
    data = Path(__file__).parents[1] / "data" / "extraction"
    config = load_config(data / "config.yaml")
    phases: dict[str, float] = {}
    evaluate_extraction_to_folder(
        gold=data / "gold.jsonl",
        prompts=data / "prompts.csv",
        predictions=data / "llm.jsonl",
        output_dir=tmp_path / "out",
        run_id="run-1",
        settings=resolve_settings(config),
        config=config,
        phase_seconds=phases,
        split=True,
    )
    assert not was_split(phases)
    assert (tmp_path / "out" / "metrics.csv").exists()


def test_shards_cover_every_position_once():
    for total in (0, 1, 2, 7, 100):
        for count in (1, 2, 3):
            positions = [i for index in range(count) for i in Shard(index, count).range(total)]
            assert positions == list(range(total))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"document_id": "d1", "context": "x"}', "d1"),
        (b'{"context": "x", "document_id":42}', "42"),
        (b'{"document_id": "d\\"1"}', None),  # an escape: left to the parser
        (b'{"document_id": "a", "annotations": [{"document_id": "b"}]}', None),  # two: ambiguous
        (b'{"context": "\\"document_id\\": \\"z\\"", "document_id": "k"}', "k"),  # inside a string
        (b'{"document\\u005fid": "d1"}', None),
    ],
)
def test_the_document_id_of_a_raw_line(line, expected):
    assert quick_document_id(line) == expected


def test_references_that_do_not_start_with_their_id_are_read_whole_by_each_half(workload, tmp_path):
    # No reference starts with its ItemId, so the export cannot be cut without parsing it: each
    # half parses it all and builds its own slice.
    export = json.loads((workload / "gold_eppi.json").read_text())
    export["References"] = [{"Title": ref.get("Title"), **ref} for ref in export["References"]]
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(export, indent=1))
    with pytest.raises(ExportNotSplit):
        split_references(gold.read_bytes(), 0.5)
    evaluate(workload, tmp_path / "one", split=False, gold=gold)
    _, phases = evaluate(workload, tmp_path / "two", split=True, gold=gold)
    assert was_split(phases)
    assert_same_folders(tmp_path / "one", tmp_path / "two")


def test_an_export_whose_references_are_not_its_last_key_gives_the_same_artefacts(workload, tmp_path):
    # The cut then takes the next key into the second part, which does not parse: the run is read
    # in one process.
    export = json.loads((workload / "gold_eppi.json").read_text())
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"References": export["References"], "CodeSets": export["CodeSets"]}))
    evaluate(workload, tmp_path / "one", split=False, gold=gold)
    evaluate(workload, tmp_path / "two", split=True, gold=gold)
    assert_same_folders(tmp_path / "one", tmp_path / "two")


@pytest.mark.parametrize("indent", [None, 1, 4])
def test_the_references_are_cut_between_two_of_them_whatever_the_layout(workload, indent):
    export = json.loads((workload / "gold_eppi.json").read_text())
    data = json.dumps(export, indent=indent).encode()
    head, first, second = split_references(data, 0.5)
    assert json.loads(head) == {**export, "References": []}
    first_part, second_part = json.loads(first), json.loads(second)
    assert first_part + second_part == export["References"]
    assert 0.4 < len(first_part) / len(export["References"]) < 0.6


def test_a_cut_before_a_nested_object_fails_the_first_part_and_is_never_used():
    # The first `{"ItemId"` after the cut point opens an object inside a reference's codes: the
    # first part is then not valid JSON, and the part reader refuses it (the run is read otherwise).
    nested = {"ItemId": 7, "ItemDocumentId": 1, "Text": "x"}
    export = {
        "CodeSets": [],
        "References": [
            {
                "ItemId": 1,
                "Codes": [{"AttributeId": 5, "ItemAttributeFullTextDetails": [{"Text": "y"}, nested]}],
            },
            {"ItemId": 2, "Codes": []},
        ],
    }
    data = json.dumps(export).encode()
    fraction = (data.index(b'{"ItemId": 7') - data.index(b"[", data.index(b'"References"'))) / len(
        data
    ) - 0.01
    head, first, second = split_references(data, fraction)
    with pytest.raises(json.JSONDecodeError):
        json.loads(first)
    source = data
    with pytest.raises(ValueError, match="did not parse"):
        read_eppi_gold_part(
            source, attribute_types={}, part=0, fraction=fraction, place_part=lambda ids: (0, ids)
        )


def test_predictions_without_context_in_both_halves_are_counted_once_as_in_one_process(workload, tmp_path):
    lines = (workload / "llm.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    ok = [record for record in records if record.get("status", "ok") == "ok"]
    for record in (ok[0], ok[len(ok) // 2], ok[-1]):  # in the first half, the middle and the second
        record["context"] = None
    without = tmp_path / "without_context.jsonl"
    without.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")

    single, _ = evaluate(workload, tmp_path / "one", split=False, predictions=without)
    split, phases = evaluate(workload, tmp_path / "two", split=True, predictions=without)

    assert was_split(phases)
    assert_same_folders(tmp_path / "one", tmp_path / "two")
    counted = [warning for warning in single.evaluation.warnings if "without a context" in warning]
    assert len(counted) == 1 and counted[0].startswith("3 document(s)")
    assert split.log_lines() == single.log_lines()
