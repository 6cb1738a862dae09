"""The plan of the span evaluation's fast path: two plain JSONL files cut into chunks, each a byte
range of gold and the prediction lines that pair with it: the same line numbers when both files have
as many lines (the reader checks the ids agree), else found by the id a line's first bytes name.
The process that scores a chunk reads its bytes (`span_file_read`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from annotations.importers.labels import LabelMap
from annotations.importers.spans import JSONL_SUFFIXES
from metrics.pipeline import spans as span_pipeline
from metrics.pipeline.jsonl_lines import (
    DocumentLines,
    chunk_bounds,
    line_document_ids,
    line_ends,
    plain_files,
    positions_in_gold,
)

# Gold bytes per chunk at most (beside CHUNK_DOCUMENTS documents at most): 768 documents of the
# bench corpora are 0.9-1.6 MB.
CHUNK_BYTES = 1 << 23


class NotSure(Exception):
    """The fast path is not sure of something: the validating reader reads both inputs again."""


@dataclass(frozen=True)
class SpanFileChunk:
    """Documents `first_position ...` of gold and the predictions' lines that pair with them."""

    first_position: int
    documents: int
    gold: DocumentLines
    predictions: DocumentLines
    label_map: dict[str, str]  # normalized label -> canonical type (LabelMap.mapping as a plain dict)
    allowed_predicted_types: frozenset[str] | None = None
    keep_leaked: bool = True  # False: the scores list no leaked span (`score_span_columns`)


def plan_span_file_chunks(
    gold_path: Any,
    predictions_path: Any,
    *,
    label_map: LabelMap,
    by_document_id: bool = False,
    keep_leaked: bool = True,
) -> list[SpanFileChunk]:
    """The chunks of two plain JSONL files; NotSure for any other input, or (`by_document_id`, or
    files of unequal lengths) when a prediction line names no document, an unknown or a repeated one."""
    paths = (gold_path, predictions_path)
    if not plain_files(*paths) or any(Path(path).suffix.lower() not in JSONL_SUFFIXES for path in paths):
        raise NotSure
    gold_ends = _without_trailing_blank_lines(str(gold_path), line_ends(str(gold_path)))
    predicted_ends = _without_trailing_blank_lines(str(predictions_path), line_ends(str(predictions_path)))
    if len(gold_ends) == 0 or len(predicted_ends) == 0:
        raise NotSure
    gold_starts = np.concatenate(([0], gold_ends[:-1]))
    if len(gold_ends) == len(predicted_ends) and not by_document_id:
        predicted_starts = np.concatenate(([0], predicted_ends[:-1]))
    else:
        predicted_starts, predicted_ends = _predicted_lines_by_gold_line(
            str(gold_path), gold_starts, gold_ends, str(predictions_path), predicted_ends
        )
    return [
        SpanFileChunk(
            first_position=first,
            documents=last - first,
            gold=DocumentLines(str(gold_path), gold_starts[first:last], gold_ends[first:last]),
            predictions=DocumentLines(
                str(predictions_path), predicted_starts[first:last], predicted_ends[first:last]
            ),
            label_map=dict(label_map.mapping),
            keep_leaked=keep_leaked,
        )
        # CHUNK_DOCUMENTS read at call time: tests cut small chunks.
        for first, last in chunk_bounds(gold_ends, span_pipeline.CHUNK_DOCUMENTS, CHUNK_BYTES)
    ]


def _predicted_lines_by_gold_line(
    gold_path: str,
    gold_starts: np.ndarray,
    gold_ends: np.ndarray,
    predictions_path: str,
    predicted_ends: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """For each gold line, the byte offsets of the prediction line naming its document (-1: none).
    Blank prediction lines are passed over, as the validating reader passes over them."""
    gold_ids = line_document_ids(gold_path, gold_starts, gold_ends)
    predicted_starts = np.concatenate(([0], predicted_ends[:-1]))
    predicted_ids = line_document_ids(predictions_path, predicted_starts, predicted_ends)
    if gold_ids is None or predicted_ids is None or None in gold_ids:
        raise NotSure
    named = np.fromiter((document_id is not None for document_id in predicted_ids), dtype=bool)
    predicted_ids = [document_id for document_id in predicted_ids if document_id is not None]
    predicted_starts, predicted_ends = predicted_starts[named], predicted_ends[named]
    lines = positions_in_gold(predicted_ids, gold_ids)
    if lines is None:
        raise NotSure
    starts = np.full(len(gold_ids), -1, dtype=np.int64)
    ends = np.full(len(gold_ids), -1, dtype=np.int64)
    starts[lines] = predicted_starts
    ends[lines] = predicted_ends
    return starts, ends


def _without_trailing_blank_lines(path: str, ends: np.ndarray) -> np.ndarray:
    """`ends` without the blank lines that end the file (an editor's extra newline), which the
    validating reader passes over."""
    starts = np.concatenate(([0], ends[:-1]))
    last = len(ends)
    with open(path, "rb") as file:
        while last:
            line = os.pread(file.fileno(), int(ends[last - 1] - starts[last - 1]), int(starts[last - 1]))
            if line and not line.isspace():
                break
            last -= 1
    return ends[:last]
