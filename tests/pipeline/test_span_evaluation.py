"""Pairing predictions with gold, and evaluating span files end to end (metrics.pipeline.span_evaluation)."""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

import pytest

from annotations.importers.errors import ImportProblem, InputValidationError
from annotations.importers.span_types import SpanAnnotation
from annotations.importers.spans import load_span_corpus
from metrics.engine.spans.types import Span
from metrics.pipeline.span_evaluation import evaluate_span_paths, pair_span_documents
from tests.importers.test_span_fixtures import cas_json, jsonl_bytes, jsonl_line, write, zip_bytes

TEXT_1 = "Patient: Max Mustermann, geb. 01.02.1980"
TEXT_2 = "Klinik Nord, Tel. 0171 2345"
GOLD_LINES = [
    jsonl_line("doc-1", TEXT_1, [(9, 23, "PERSON_NAME"), (30, 40, "dateofbirth")]),
    jsonl_line("doc-2", TEXT_2, [(0, 11, "Klinik"), (18, 27, "PHONE")]),
    jsonl_line("doc-3", "", []),
]


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    return write(tmp_path / "gold.jsonl", jsonl_bytes(GOLD_LINES))


def predictions(tmp_path: Path, lines: list[str], name: str = "pred.jsonl") -> Path:
    return write(tmp_path / name, jsonl_bytes(lines))


def pairing_problems(gold: Path, predicted: Path) -> list[ImportProblem]:
    with pytest.raises(InputValidationError) as raised:
        pair_span_documents(
            load_span_corpus(gold).documents, load_span_corpus(predicted, role="predictions").documents
        )
    return raised.value.problems


def test_pairs_follow_gold_order_and_unpredicted_gold_predicted_nothing(gold: Path, tmp_path: Path) -> None:
    predicted = predictions(tmp_path, [jsonl_line("doc-2", None, [(0, 6, "ORGANIZATION")])])
    pairs = pair_span_documents(
        load_span_corpus(gold).documents, load_span_corpus(predicted, role="predictions").documents
    )
    assert [(pair.document_id, len(pair.gold), len(pair.predicted)) for pair in pairs] == [
        ("doc-1", 2, 0),
        ("doc-2", 2, 1),
        ("doc-3", 0, 0),
    ]
    assert pairs[1].text == TEXT_2
    span = pairs[1].predicted[0]
    assert (span.start, span.end, span.entity_type) == (0, 6, "ORGANIZATION")


def test_it_rejects_predictions_for_unknown_documents(gold: Path, tmp_path: Path) -> None:
    predicted = predictions(tmp_path, [jsonl_line("doc-1", None, []), jsonl_line("doc-9", None, [])])
    (problem,) = pairing_problems(gold, predicted)
    assert (problem.file, problem.line, problem.document_id, problem.field) == (
        str(predicted),
        2,
        "doc-9",
        "document_id",
    )
    assert "not in the gold data" in problem.message


def test_it_rejects_predictions_whose_text_differs_from_the_gold_text(gold: Path, tmp_path: Path) -> None:
    predicted = predictions(tmp_path, [jsonl_line("doc-1", TEXT_1.replace("Max", "Moritz"), [])])
    (problem,) = pairing_problems(gold, predicted)
    assert (problem.line, problem.document_id, problem.field) == (1, "doc-1", "text")
    assert "differs from the gold text" in problem.message
    assert "Moritz" not in problem.message  # patient data stays out of messages that may be logged


def test_it_rejects_duplicate_predicted_documents(gold: Path, tmp_path: Path) -> None:
    predicted = predictions(tmp_path, [jsonl_line("doc-1", None, []), jsonl_line("doc-1", None, [])])
    (problem,) = pairing_problems(gold, predicted)
    assert (problem.line, problem.field) == (2, "document_id")
    assert f"first seen at {predicted}:1" in problem.message


def test_predictions_without_text_are_checked_against_the_gold_text(gold: Path, tmp_path: Path) -> None:
    entities = [
        {"start": 30, "end": 41, "entity_type": "DATE_OF_BIRTH"},
        {"start": 9, "end": 12, "entity_type": "PERSON_NAME", "text": "Moritz"},
        {"start": 13, "end": 23, "entity_type": "PERSON_NAME", "text": "Mustermann"},
    ]
    predicted = predictions(tmp_path, [jsonl_line("doc-1", None, [], entities=entities)])
    problems = pairing_problems(gold, predicted)
    assert [(p.line, p.field) for p in problems] == [(1, "entities[0].end"), (1, "entities[1].text")]
    assert "reach past the end of the text (40 code points)" in problems[0].message


def test_it_reports_problems_of_gold_and_predictions_together(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.jsonl", jsonl_bytes([jsonl_line("a", "Max", [(0, 9, "AGE")])]))
    predicted = predictions(tmp_path, ["{not json"])
    with pytest.raises(InputValidationError) as raised:
        evaluate_span_paths(gold, predicted)
    assert [(p.file, p.line) for p in raised.value.problems] == [(str(gold), 1), (str(predicted), 1)]


def test_the_results_carry_the_contract_keys(gold: Path, tmp_path: Path) -> None:
    predicted = predictions(
        tmp_path,
        [
            jsonl_line("doc-1", None, [(9, 12, "PERSON_NAME"), (30, 40, "DATE_OF_BIRTH"), (0, 7, "Station")]),
            jsonl_line("doc-2", TEXT_2, []),
        ],
    )
    results = evaluate_span_paths(gold, predicted, restrict_to_gt_types=True)
    assert results["format_version"] == 1
    assert results["documents"] == 3
    assert results["config"] == {
        "input": str(gold),
        "predictions": str(predicted),
        "label_map": None,
        "restrict_to_gt_types": True,
        "include_sensitive_text": False,
        "gold_annotator": None,
        "intervals": {
            "level": 0.95,
            "resamples": 2000,
            "seed": 20260808,
            "method": "cluster_bootstrap_percentile",
            "leakage_method": "clopper_pearson",
        },
    }
    for key in ("micro", "macro", "leakage", "per_type", "per_document", "restricted_predictions_dropped"):
        assert key in results
    assert results["micro"]["chars"]["all"]["tp"] == 13
    assert results["leakage"]["entity_missed"]["documents_leaked"] == 1
    # "Station" is unknown, so OTHER_PII; gold's "Klinik" is OTHER_PII too, so it is not dropped.
    assert results["restricted_predictions_dropped"] == 0
    messages = [warning["message"] for warning in results["warnings"]]
    assert any("'Klinik'" in message for message in messages)
    assert any("'Station'" in message for message in messages)
    assert {warning["file"] for warning in results["warnings"]} == {str(gold), str(predicted)}


def test_restricting_to_gold_types_drops_and_counts_other_predictions(gold: Path, tmp_path: Path) -> None:
    predicted = predictions(tmp_path, [jsonl_line("doc-1", None, [(9, 23, "PERSON_NAME"), (0, 7, "EMAIL")])])
    assert (
        evaluate_span_paths(gold, predicted, restrict_to_gt_types=True)["restricted_predictions_dropped"] == 1
    )
    assert evaluate_span_paths(gold, predicted)["restricted_predictions_dropped"] == 0


def test_results_do_not_depend_on_the_order_of_predictions(gold: Path, tmp_path: Path) -> None:
    lines = [
        jsonl_line("doc-1", None, [(9, 23, "PERSON_NAME")]),
        jsonl_line("doc-2", None, [(0, 6, "PHONE")]),
    ]
    forward = evaluate_span_paths(gold, predictions(tmp_path, lines, "a.jsonl"))
    backward = evaluate_span_paths(gold, predictions(tmp_path, lines[::-1], "b.jsonl"))
    forward.pop("config"), backward.pop("config")
    assert forward == backward


def test_progress_is_reported_up_to_the_number_of_gold_documents(gold: Path, tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    evaluate_span_paths(
        gold, predictions(tmp_path, [jsonl_line("doc-2", None, [])]), progress=lambda *a: calls.append(a)
    )
    assert calls[-1] == (3, 3)


def test_empty_predictions_are_scored_as_nothing_found_with_a_warning(gold: Path, tmp_path: Path) -> None:
    results = evaluate_span_paths(gold, write(tmp_path / "empty.jsonl", b""))
    assert results["leakage"]["entity_missed"]["documents_leaked"] == 2
    assert "predictions hold no documents" in results["warnings"][-1]["message"]


def test_the_gold_annotator_is_chosen_from_a_project_export(tmp_path: Path) -> None:
    export = write(
        tmp_path / "export.zip",
        zip_bytes(
            {
                "annotation/a.txt/alice.json": cas_json("Max Muster", [(0, 10, "PERSON_NAME")]),
                "annotation/a.txt/bob.json": cas_json("Max Muster", [(0, 3, "PERSON_NAME")]),
            }
        ),
    )
    predicted = predictions(tmp_path, [jsonl_line("a", None, [(0, 3, "PERSON_NAME")])])
    with pytest.raises(InputValidationError, match=r"several annotators \(alice, bob\)"):
        evaluate_span_paths(export, predicted)
    by_bob = evaluate_span_paths(export, predicted, gold_annotator="bob")
    by_alice = evaluate_span_paths(export, predicted, gold_annotator="alice")
    assert by_bob["micro"]["chars"]["all"]["recall"] == 1.0
    assert by_alice["micro"]["chars"]["all"]["recall"] == 0.3
    assert by_alice["config"]["gold_annotator"] == "alice"


def test_a_label_map_applies_to_gold_and_predictions(gold: Path, tmp_path: Path) -> None:
    label_map = write(tmp_path / "map.json", b'{"klinik": "ORGANIZATION", "spital": "ORGANIZATION"}')
    predicted = predictions(tmp_path, [jsonl_line("doc-2", None, [(0, 11, "Spital")])])
    results = evaluate_span_paths(gold, predicted, label_map_path=label_map)
    assert results["warnings"] == []
    assert results["per_type"]["ORGANIZATION"]["gold"] == 1
    assert results["per_type"]["ORGANIZATION"]["predicted"] == 1
    assert results["config"]["label_map"] == str(label_map)


def test_the_garbage_collector_is_left_as_it_was(gold: Path, tmp_path: Path) -> None:
    assert gc.isenabled()
    evaluate_span_paths(gold, predictions(tmp_path, []))
    assert gc.isenabled()


def test_importer_spans_start_with_the_engine_span_fields() -> None:
    # The glue hands importer spans to the engine without copying them (see _document_spans).
    engine_fields = [field.name for field in dataclasses.fields(Span)]
    assert list(SpanAnnotation._fields[: len(engine_fields)]) == engine_fields


def without_leaked_texts(results: dict) -> dict:
    for document in results["per_document"]:
        document.pop("leaked_spans", None)
    return {**results, "config": {**results["config"], "include_sensitive_text": False}}


@pytest.mark.parametrize("gold_input", ["jsonl", "export"])
def test_without_sensitive_text_the_results_are_those_with_it_less_the_leaked_texts(
    gold: Path, tmp_path: Path, gold_input: str
) -> None:
    # The fast path reads plain JSONL; an export goes the validating path. Both leak doc-1's name.
    if gold_input == "export":
        gold = write(
            tmp_path / "export.zip",
            zip_bytes({"annotation/doc-1.txt/alice.json": cas_json(TEXT_1, [(9, 23, "PERSON_NAME")])}),
        )
    predicted = predictions(tmp_path, [jsonl_line("doc-1", None, [(9, 12, "PERSON_NAME")])])
    with_texts = evaluate_span_paths(gold, predicted, include_sensitive_text=True)
    assert any("leaked_spans" in document for document in with_texts["per_document"])
    assert evaluate_span_paths(gold, predicted) == without_leaked_texts(with_texts)
