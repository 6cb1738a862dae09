"""A minimal JSONL reader feeding the span engine, for the benchmark only.

It stands in for metrics.pipeline.span_evaluation.evaluate_span_paths until that exists, and validates
nothing beyond what the engine checks. It streams both files in step: a document is scored as soon
as its gold and its predictions have both been read, and only lines that arrive out of order wait in
memory (as raw text, parsed when their partner arrives).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from metrics.engine.spans import DocumentSpans, Span, aggregate, score_document


def _id_of(line: str) -> str:
    return json.loads(line)["document_id"]


def _document(gold_line: str, predicted_line: str | None) -> DocumentSpans:
    gold = json.loads(gold_line)
    predicted = json.loads(predicted_line)["entities"] if predicted_line else []
    return DocumentSpans(
        document_id=gold["document_id"],
        text=gold["text"],
        gold=[Span(e["start"], e["end"], e["entity_type"]) for e in gold["entities"]],
        predicted=[Span(e["start"], e["end"], e["entity_type"]) for e in predicted],
    )


def read_documents(gold_path: Path, predictions_path: Path) -> Iterator[DocumentSpans]:
    """Every gold document with its predictions (none when the predictions file lacks it)."""
    waiting_gold: dict[str, str] = {}
    waiting_predictions: dict[str, str] = {}
    with gold_path.open(encoding="utf-8") as gold_file, predictions_path.open(encoding="utf-8") as pred_file:
        for gold_line in gold_file:
            predicted_line = pred_file.readline()
            gold_id = _id_of(gold_line)
            if predicted_line:
                predicted_id = _id_of(predicted_line)
                if predicted_id == gold_id:
                    yield _document(gold_line, predicted_line)
                    continue
                waiting_predictions[predicted_id] = predicted_line
            if gold_id in waiting_predictions:
                yield _document(gold_line, waiting_predictions.pop(gold_id))
            else:
                waiting_gold[gold_id] = gold_line
        for predicted_line in pred_file:
            waiting_predictions[_id_of(predicted_line)] = predicted_line
    for gold_id, gold_line in waiting_gold.items():
        yield _document(gold_line, waiting_predictions.pop(gold_id, None))


def evaluate_jsonl_paths(gold_path: Path, predictions_path: Path) -> dict:
    """Score every document of the gold file against the predictions file (missing = no predictions)."""
    return aggregate(score_document(doc) for doc in read_documents(gold_path, predictions_path))
