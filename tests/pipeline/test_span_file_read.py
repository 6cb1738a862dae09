"""The fast path of the span evaluation reads two plain JSONL files straight into chunk columns.

Where it reads, it gives what the validating reader gives, score by score; where anything is not
plainly valid (a malformed or blank line, bad offsets, a text that differs, an unknown label, an
annotator, documents that do not pair line by line, a duplicate id), it is "not sure" and the
validating reader reads both inputs again, so every error and warning is worded as before.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotations.importers.errors import InputValidationError
from annotations.importers.labels import load_label_map
from metrics.pipeline import spans as span_pipeline
from metrics.pipeline.span_evaluation import score_span_paths
from tests.engine.spans.oracle import document_scores
from tests.pipeline.span_file_records import (
    LABELS,
    TEXT,
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


@st.composite
def paired_files(draw: st.DrawFn) -> tuple[list[dict], list[dict], bool]:
    """Valid gold and predictions lines that pair up: random texts, spans, labels, entity texts and
    predictions with or without their text."""
    gold, predicted = [], []
    for index in range(draw(st.integers(1, 7))):
        text = draw(st.text(alphabet="ab1ä ,.-_\n€🙂", max_size=30))

        def entities(with_texts: bool, text: str = text) -> list[dict]:
            found = []
            for _ in range(draw(st.integers(0, 4)) if text else 0):
                start = draw(st.integers(0, len(text) - 1))
                end = draw(st.integers(start + 1, len(text)))
                entity = {"start": start, "end": end, "entity_type": draw(st.sampled_from(LABELS))}
                if with_texts and draw(st.booleans()):
                    entity["text"] = text[start:end]
                found.append(entity)
            return found

        document_id = f"doc-{index}"
        gold.append({"document_id": document_id, "text": text, "entities": entities(True)})
        prediction = {"document_id": document_id, "entities": entities(True)}
        if draw(st.booleans()):
            prediction["text"] = text
        predicted.append(prediction)
    if draw(st.booleans()):  # predictions in another order, some documents without one
        predicted = draw(st.permutations(predicted))
        predicted = predicted[: draw(st.integers(1, len(predicted)))]
    return gold, predicted, draw(st.booleans())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paired_files())
def test_it_scores_what_the_validating_reader_scores(tmp_path_factory, files):
    gold_lines, predicted_lines, restrict = files
    gold, predictions = write_pair(tmp_path_factory.mktemp("files"), gold_lines, predicted_lines)
    assert all(chunk is not None for chunk in fast_chunks(gold, predictions, by_document_id=True))

    fast = score_span_paths(gold, predictions, restrict_to_gt_types=restrict)
    slow = validating(gold, predictions, restrict_to_gt_types=restrict)

    assert score_fields(fast) == score_fields(slow)
    assert (len(fast.scores), fast.predicted_ids, fast.warnings) == (len(slow.scores), slow.predicted_ids, [])


def test_it_drops_predicted_types_that_gold_lacks_when_restricted(tmp_path):
    gold, predictions = write_pair(
        tmp_path, [gold_record("a"), gold_record("b"), gold_record("c")], [predicted_record(i) for i in "abc"]
    )
    fast = score_span_paths(gold, predictions, restrict_to_gt_types=True)
    assert [score.dropped_by_type for score in document_scores(fast.scores)] == [(("ADDRESS", 1),)] * 3
    assert score_fields(fast) == score_fields(validating(gold, predictions, restrict_to_gt_types=True))


NOT_SURE = {
    "a malformed line": ('{"document_id": "c", "text": ', None),
    "an empty line": ("", None),
    "a line that is not an object": ("[1, 2]", None),
    "a byte order mark": ("\ufeff" + json.dumps(gold_record("c")), None),
    "a missing document id": (gold_record("c", document_id=None), None),
    "an empty document id": (gold_record("c", document_id=""), None),
    "a gold document without text": (gold_record("c", text=None), None),
    "a text that is not a string": (gold_record("c", text=5), None),
    "entities that are not a list": (gold_record("c", entities={}), None),
    "an entity that is not an object": (gold_record("c", entities=[[0, 4]]), None),
    "an entity without start": (gold_record("c", entities=[{"end": 4, "entity_type": "AGE"}]), None),
    "a start that is a boolean": (
        gold_record("c", entities=[{"start": False, "end": 4, "entity_type": "AGE"}]),
        None,
    ),
    "an end that is a float": (
        gold_record("c", entities=[{"start": 0, "end": 4.0, "entity_type": "AGE"}]),
        None,
    ),
    "an offset beyond 64 bits": (
        gold_record("c", entities=[{"start": 0, "end": 10**20, "entity_type": "AGE"}]),
        None,
    ),
    "a negative start": (gold_record("c", entities=[{"start": -1, "end": 4, "entity_type": "AGE"}]), None),
    "an empty span": (gold_record("c", entities=[{"start": 4, "end": 4, "entity_type": "AGE"}]), None),
    "an end past the text": (
        gold_record("c", entities=[{"start": 0, "end": 99, "entity_type": "AGE"}]),
        None,
    ),
    "an entity type that is not a string": (
        gold_record("c", entities=[{"start": 0, "end": 4, "entity_type": 7}]),
        None,
    ),
    "an entity text that differs": (
        gold_record("c", entities=[{"start": 0, "end": 4, "entity_type": "AGE", "text": "Otto"}]),
        None,
    ),
    "an entity text that is not a string": (
        gold_record("c", entities=[{"start": 0, "end": 4, "entity_type": "AGE", "text": 4}]),
        None,
    ),
    "an unknown label": (
        gold_record("c", entities=[{"start": 0, "end": 4, "entity_type": "SHOE_SIZE"}]),
        None,
    ),
    "an annotator": (gold_record("c", annotator="anna"), None),
    "a predicted text that differs": (None, predicted_record("c", text=TEXT + " ")),
    "a predicted end past the gold text": (
        None,
        predicted_record("c", entities=[{"start": 0, "end": 99, "entity_type": "AGE"}]),
    ),
    "a predicted entity text that differs from the gold text": (
        None,
        predicted_record("c", entities=[{"start": 0, "end": 4, "entity_type": "AGE", "text": "Otto"}]),
    ),
}


@pytest.mark.parametrize("case", NOT_SURE)
def test_it_is_not_sure_of_anything_the_validating_reader_would_word(tmp_path, case):
    gold_line, predicted_line = NOT_SURE[case]
    # The third line is the case's; the first chunk (a, b) is plain and read.
    gold_lines = [
        gold_record("a"),
        gold_record("b"),
        gold_record("c") if gold_line is None else gold_line,
        gold_record("d"),
    ]
    predicted_lines = [predicted_record(i) for i in "ab"]
    predicted_lines += [
        predicted_record("c") if predicted_line is None else predicted_line,
        predicted_record("d"),
    ]
    gold, predictions = write_pair(tmp_path, gold_lines, predicted_lines)

    first, second = fast_chunks(gold, predictions)
    assert first is not None and second is None

    try:
        expected = validating(gold, predictions)
    except InputValidationError as error:
        with pytest.raises(InputValidationError) as raised:
            score_span_paths(gold, predictions)
        # The same problems, each naming the file it is in, as the validating reader words them.
        assert [problem.message for problem in raised.value.problems] == [
            problem.message for problem in error.problems
        ]
    else:
        scored = score_span_paths(gold, predictions)
        assert score_fields(scored) == score_fields(expected)
        assert [warning.message for warning in scored.warnings] == [
            warning.message for warning in expected.warnings
        ]


def test_a_label_first_met_in_a_later_chunk_is_read_then_and_after(tmp_path):
    """The reader matches entity types among the labels it has decoded before, and learns a new one
    where it first occurs: both times the chunks score as the validating reader scores them."""
    label_map = tmp_path / "labels.json"
    label_map.write_text(json.dumps({"Reisepass-Nr. 7f3a": "ID_NUMBER"}), encoding="utf-8")
    renamed = [{**entity, "entity_type": "Reisepass-Nr. 7f3a"} for entity in gold_record("c")["entities"]]
    gold, predictions = write_pair(
        tmp_path,
        [gold_record("a"), gold_record("b"), gold_record("c", entities=renamed), gold_record("d")],
        [predicted_record(i) for i in "abcd"],
    )
    expected = score_fields(validating(gold, predictions, label_map_path=label_map))
    for _ in range(2):  # the label is new the first time, known the second
        assert None not in fast_chunks(gold, predictions, load_label_map(label_map))
        fast = score_span_paths(gold, predictions, label_map_path=label_map)
        assert (score_fields(fast), fast.warnings) == (expected, [])


def test_documents_without_a_prediction_line_predicted_nothing(tmp_path):
    gold, predictions = write_pair(tmp_path, [gold_record(i) for i in "abc"], [predicted_record("c")])
    read = fast_chunks(gold, predictions)
    assert [len(chunk.chunk.columns.predicted) for chunk in read] == [0, 2]
    assert [chunk.unpredicted_ids for chunk in read] == [["a", "b"], []]
    fast = score_span_paths(gold, predictions)
    assert fast.predicted_ids == {"c"}
    assert score_fields(fast) == score_fields(validating(gold, predictions))


@pytest.mark.parametrize("blank", ["", "  ", "\t "])
def test_a_blank_line_among_as_many_prediction_lines_as_gold_lines_is_paired_by_id(tmp_path, blank):
    gold, predictions = write_pair(
        tmp_path, [gold_record(i) for i in "abc"], [predicted_record("a"), blank, predicted_record("c")]
    )
    assert fast_chunks(gold, predictions)[0] == "unpaired"
    assert all(chunk is not None for chunk in fast_chunks(gold, predictions, by_document_id=True))
    assert score_fields(score_span_paths(gold, predictions)) == score_fields(validating(gold, predictions))


def test_it_leaves_a_duplicate_document_in_another_chunk_to_the_validating_reader(tmp_path):
    gold, predictions = write_pair(
        tmp_path, [gold_record("a"), gold_record("b"), gold_record("a")], [predicted_record(i) for i in "aba"]
    )
    assert all(chunk is not None for chunk in fast_chunks(gold, predictions))
    with pytest.raises(InputValidationError, match="duplicate document id"):
        score_span_paths(gold, predictions)


def test_a_label_map_maps_labels_as_the_validating_reader_maps_them(tmp_path):
    label_map = tmp_path / "labels.json"
    label_map.write_text(json.dumps({"Shoe Size": "AGE", "name": "ORGANIZATION"}), encoding="utf-8")
    shoe = [{"start": 0, "end": 4, "entity_type": "shoe size"}]
    gold, predictions = write_pair(
        tmp_path,
        [gold_record("a", entities=shoe), gold_record("b"), gold_record("c")],
        [predicted_record(i) for i in "abc"],
    )
    fast = score_span_paths(gold, predictions, label_map_path=label_map)
    slow = validating(gold, predictions, label_map_path=label_map)
    assert score_fields(fast) == score_fields(slow)
    assert {"AGE", "ORGANIZATION"} <= set(score_fields(fast)[0][2])
    assert fast.warnings == slow.warnings == []


def test_predictions_that_all_carry_their_text_are_read_when_every_text_is_the_gold_text(tmp_path):
    gold, predictions = write_pair(
        tmp_path, [gold_record(i) for i in "abcd"], [predicted_record(i, text=TEXT) for i in "abcd"]
    )
    assert all(chunk is not None for chunk in fast_chunks(gold, predictions))


def test_predictions_that_all_carry_their_text_are_not_sure_when_one_text_differs(tmp_path):
    predicted = [predicted_record(i, text=TEXT) for i in "abc"] + [predicted_record("d", text=TEXT + " ")]
    gold, predictions = write_pair(tmp_path, [gold_record(i) for i in "abcd"], predicted)
    first, second = fast_chunks(gold, predictions)
    assert first is not None and second is None
