"""The fast path's plan: two plain JSONL files cut into chunks of byte ranges, predictions paired with
gold line by line or by the document id each line names, and anything the plan cannot pair left to
the validating reader (the plan is None)."""

from __future__ import annotations

import json

import pytest

from annotations.importers.errors import InputValidationError
from annotations.importers.labels import LabelMap
from metrics.pipeline import span_file_plan
from metrics.pipeline import spans as span_pipeline
from metrics.pipeline.span_evaluation import score_span_paths
from metrics.pipeline.span_file_plan import NotSure, plan_span_file_chunks
from tests.pipeline.span_file_records import (
    fast_chunks,
    gold_record,
    predicted_record,
    score_fields,
    validating,
    write_pair,
)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(span_pipeline, "CHUNK_DOCUMENTS", 2)


def test_it_pairs_predictions_in_another_order_by_document_id(tmp_path):
    gold, predictions = write_pair(
        tmp_path,
        [gold_record(i) for i in "abcde"],
        [
            predicted_record("b"),
            predicted_record("a"),
            predicted_record("e"),
            predicted_record("d"),
            predicted_record("c"),
        ],
    )
    assert fast_chunks(gold, predictions) == ["unpaired", "unpaired", "unpaired"]
    assert None not in fast_chunks(gold, predictions, by_document_id=True)
    assert score_fields(score_span_paths(gold, predictions)) == score_fields(validating(gold, predictions))


@pytest.mark.parametrize(
    "predicted",
    [
        [predicted_record("a"), predicted_record("x")],
        [predicted_record("a"), predicted_record("a")],
        [predicted_record("a"), {"entities": []}],
    ],
    ids=[
        "a document not in gold",
        "a document predicted twice",
        "a line without document id",
    ],
)
def test_it_leaves_predictions_it_cannot_pair_to_the_validating_reader(tmp_path, predicted):
    gold, predictions = write_pair(tmp_path, [gold_record(i) for i in "abc"], predicted)
    assert fast_chunks(gold, predictions) is None
    with pytest.raises(InputValidationError) as raised:
        score_span_paths(gold, predictions)
    with pytest.raises(InputValidationError) as expected:
        validating(gold, predictions)
    # The validating reader read the same files from their folders (`g/`, `p/`), and says so.
    assert [problem.message for problem in raised.value.problems] == [
        problem.message.replace("/p/", "/").replace("/g/", "/") for problem in expected.value.problems
    ]


def test_it_passes_over_blank_prediction_lines_as_the_validating_reader_does(tmp_path):
    gold, predictions = write_pair(
        tmp_path, [gold_record(i) for i in "abc"], [predicted_record("c"), " \t", predicted_record("a"), ""]
    )
    read = fast_chunks(gold, predictions, by_document_id=True)
    assert [chunk.unpredicted_ids for chunk in read] == [["b"], []]
    assert score_fields(score_span_paths(gold, predictions)) == score_fields(validating(gold, predictions))


def test_blank_lines_that_end_a_file_are_passed_over(tmp_path):
    gold, predictions = write_pair(
        tmp_path, [gold_record(i) for i in "abc"], [predicted_record(i) for i in "abc"]
    )
    gold.write_bytes(gold.read_bytes() + b"\n \n")
    predictions.write_bytes(predictions.read_bytes() + b"\n")
    chunks = plan_span_file_chunks(gold, predictions, label_map=LabelMap.default())
    assert [(chunk.first_position, chunk.documents) for chunk in chunks] == [(0, 2), (2, 1)]
    assert chunks[0].predictions.starts[1:].tolist() == chunks[0].predictions.ends[:-1].tolist()  # by line
    assert None not in fast_chunks(gold, predictions)
    assert score_fields(score_span_paths(gold, predictions)) == score_fields(validating(gold, predictions))


def test_it_leaves_a_blank_gold_line_to_the_validating_reader(tmp_path):
    gold, predictions = write_pair(
        tmp_path, [gold_record("a"), "", gold_record("b")], [predicted_record("a")]
    )
    assert fast_chunks(gold, predictions) is None
    assert score_fields(score_span_paths(gold, predictions)) == score_fields(validating(gold, predictions))


def test_it_reads_only_plain_jsonl_files(tmp_path):
    gold, predictions = write_pair(tmp_path, [gold_record("a")], [predicted_record("a")])
    renamed = gold.rename(tmp_path / "gold.txt")
    with pytest.raises(NotSure):
        plan_span_file_chunks(renamed, predictions, label_map=LabelMap.default())
    with pytest.raises(NotSure):
        plan_span_file_chunks(tmp_path, predictions, label_map=LabelMap.default())


def test_a_chunk_holds_no_more_gold_bytes_than_chunk_bytes_unless_one_line_does(tmp_path, monkeypatch):
    long_text = "Köln " * 100
    long_record = gold_record("b", text=long_text, entities=[])
    gold, predictions = write_pair(
        tmp_path,
        [gold_record("a"), long_record, gold_record("c"), gold_record("d")],
        [predicted_record(i) for i in "abcd"],
    )
    line = len(json.dumps(gold_record("a"), ensure_ascii=False).encode()) + 1
    monkeypatch.setattr(span_file_plan, "CHUNK_BYTES", 2 * line)
    monkeypatch.setattr(span_pipeline, "CHUNK_DOCUMENTS", 3)
    chunks = plan_span_file_chunks(gold, predictions, label_map=LabelMap.default())
    assert [(chunk.first_position, chunk.documents) for chunk in chunks] == [(0, 1), (1, 1), (2, 2)]
    assert all(read is not None for read in fast_chunks(gold, predictions))
    assert score_fields(score_span_paths(gold, predictions)) == score_fields(validating(gold, predictions))
