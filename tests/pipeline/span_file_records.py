"""Gold and prediction lines for the tests of the span evaluation's fast path (`span_file_plan`,
`span_file_read`), and the validating reader's answer to compare with."""

from __future__ import annotations

import json
from pathlib import Path

from annotations.importers.labels import LabelMap
from metrics.pipeline.span_evaluation import score_span_paths
from metrics.pipeline.span_file_plan import NotSure, plan_span_file_chunks
from metrics.pipeline.span_file_read import LinesDoNotPair, read_span_file_chunk
from tests.engine.spans.oracle import document_scores

TEXT = "Anna Beispiel, geboren am 01.02.1990, wohnt in Köln 😀."

GOLD_ENTITIES = [
    {"start": 0, "end": 13, "entity_type": "PERSON_NAME"},
    {"start": 26, "end": 36, "entity_type": "DATE_OF_BIRTH", "text": "01.02.1990"},
]

PREDICTED_ENTITIES = [
    {"start": 0, "end": 4, "entity_type": "name"},
    {"start": 47, "end": 51, "entity_type": "ADDRESS"},
]

LABELS = ("PERSON_NAME", "name", "OTHER_DATE", "ID_NUMBER")


def gold_record(identifier: str, **changes) -> dict:
    return {"document_id": identifier, "text": TEXT, "entities": list(GOLD_ENTITIES), **changes}


def predicted_record(identifier: str, **changes) -> dict:
    return {"document_id": identifier, "entities": list(PREDICTED_ENTITIES), **changes}


def write_lines(path: Path, records: list) -> Path:
    path.write_text(
        "".join(
            (record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)) + "\n"
            for record in records
        ),
        encoding="utf-8",
    )
    return path


def write_pair(tmp_path: Path, gold: list, predicted: list) -> tuple[Path, Path]:
    return write_lines(tmp_path / "gold.jsonl", gold), write_lines(tmp_path / "predictions.jsonl", predicted)


def fast_chunks(gold: Path, predictions: Path, label_map: LabelMap | None = None, **options) -> list | None:
    """Each chunk as the fast path reads it (None: not sure; "unpaired": its lines do not pair), or
    None when it does not plan at all."""
    try:
        chunks = plan_span_file_chunks(
            gold, predictions, label_map=LabelMap.default() if label_map is None else label_map, **options
        )
    except NotSure:
        return None
    return [read_or_unpaired(chunk) for chunk in chunks]


def read_or_unpaired(chunk):
    try:
        return read_span_file_chunk(chunk)
    except LinesDoNotPair:
        return "unpaired"
    except NotSure:
        return None


def validating(gold: Path, predictions: Path, **options):
    """The validating reader's answer: the same files read through their folders (never the fast path)."""
    (gold.parent / "g").mkdir(exist_ok=True)
    (gold.parent / "p").mkdir(exist_ok=True)
    folder_gold = gold.parent / "g" / gold.name
    folder_predictions = gold.parent / "p" / predictions.name
    folder_gold.write_bytes(gold.read_bytes())
    folder_predictions.write_bytes(predictions.read_bytes())
    return score_span_paths(folder_gold.parent, folder_predictions.parent, **options)


def score_fields(scored) -> list[tuple]:
    return [
        (score.document_id, list(score.counts), score.types, tuple(score.leaked_spans), score.dropped_by_type)
        for score in document_scores(scored.scores)
    ]
