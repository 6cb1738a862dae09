"""Span chunks read straight from two plain JSONL files, as columns, by whoever scores them.

The fast path of the offline span evaluation. When gold and predictions are plain `.jsonl`/`.ndjson`
files whose lines pair up one to one (line k of the predictions is the document of line k of gold,
the usual shape of a pipeline's output), a chunk is only two byte ranges: the process that scores it
reads them itself, parses each line with orjson and builds the chunk's `SpanColumns` without a Python
object per span. Reading then runs in every worker of a pool, and no process ever holds the whole
gold text (a chunk's lines at a time).

It accepts only what the validating reader (`annotations.importers.spans`) accepts without a word:
anything it is not sure of (a malformed line, a blank line, a bad offset, a mismatching text, an
unknown label, an annotator, a duplicate or unpaired document...) makes it answer "not sure" (None),
and the caller reads both inputs again with the validating reader, which words every problem as it
always has. Its results are those of the validating path, document by document.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from annotations.importers.labels import LabelMap
from metrics.engine.spans.columns import SpanColumns, SpanSide
from metrics.pipeline import spans as span_pipeline
from metrics.pipeline.spans import SpanChunk, SpanPartial, score_span_chunk

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
# Newlines are found a block at a time, so the scan's temporary arrays stay a few MB.
_SCAN_BLOCK = 1 << 22
_NEWLINE = 0x0A
_START, _END, _TYPE = itemgetter("start"), itemgetter("end"), itemgetter("entity_type")


@dataclass(frozen=True)
class ByteRange:
    """Lines `[start, end)` of a file, by byte offset."""

    path: str
    start: int
    end: int

    def read_lines(self) -> list[bytes]:
        with open(self.path, "rb") as file:
            data = os.pread(file.fileno(), self.end - self.start, self.start)
        lines = data.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()  # the newline that ends the range's last line
        return lines


@dataclass(frozen=True)
class SpanFileChunk:
    """Documents `first_position ...` of gold and the predictions' lines that pair with them."""

    first_position: int
    documents: int
    gold: ByteRange
    predictions: ByteRange
    label_map: dict[str, str]  # normalized label -> canonical type (LabelMap.mapping as a plain dict)
    allowed_predicted_types: frozenset[str] | None = None


@dataclass
class SpanFileResult:
    """A chunk's partial result and the types each side named; `partial` None: not sure, read again."""

    partial: SpanPartial | None
    document_ids: Sequence[str] = ()
    gold_types: frozenset[str] = frozenset()
    predicted_types: frozenset[str] = frozenset()


def plan_span_file_chunks(
    gold_path: Any, predictions_path: Any, *, label_map: LabelMap, size: int | None = None
) -> list[SpanFileChunk] | None:
    """The chunks of two plain JSONL files with as many lines each, or None for any other input."""
    if not (_plain_jsonl(gold_path) and _plain_jsonl(predictions_path)):
        return None
    gold_ends = line_ends(str(gold_path))
    predicted_ends = line_ends(str(predictions_path))
    if len(gold_ends) == 0 or len(gold_ends) != len(predicted_ends):
        return None
    size = size or span_pipeline.CHUNK_DOCUMENTS  # read at call time: tests cut small chunks
    mapping = dict(label_map.mapping)
    chunks = []
    for first in range(0, len(gold_ends), size):
        last = min(first + size, len(gold_ends)) - 1
        chunks.append(
            SpanFileChunk(
                first_position=first,
                documents=last - first + 1,
                gold=ByteRange(
                    str(gold_path), int(gold_ends[first - 1]) if first else 0, int(gold_ends[last])
                ),
                predictions=ByteRange(
                    str(predictions_path),
                    int(predicted_ends[first - 1]) if first else 0,
                    int(predicted_ends[last]),
                ),
                label_map=mapping,
            )
        )
    return chunks


def _plain_jsonl(path: Any) -> bool:
    if not isinstance(path, str | os.PathLike):
        return False
    path = Path(path)
    return path.suffix.lower() in JSONL_SUFFIXES and path.is_file()


def line_ends(path: str) -> np.ndarray:
    """The byte offset just past each line of a file (its newline, or the end of a last line without one)."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size == 0:
            return np.zeros(0, dtype=np.int64)
        # Mapped, not read: the scan looks at the page cache's bytes without copying them.
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            data = np.frombuffer(mapped, dtype=np.uint8)
            ends = [
                np.flatnonzero(data[offset : offset + _SCAN_BLOCK] == _NEWLINE) + (offset + 1)
                for offset in range(0, size, _SCAN_BLOCK)
            ]
            del data  # the mapping cannot close while an array views it
    found = np.concatenate(ends)
    if len(found) == 0 or found[-1] != size:
        found = np.append(found, size)
    return found.astype(np.int64)


def score_span_file_chunk(chunk: SpanFileChunk) -> SpanFileResult:
    """Read, check and score one chunk: its partial result, or a result without one when not sure."""
    read = read_span_file_chunk(chunk)
    if read is None:
        return SpanFileResult(None)
    span_chunk, gold_types, predicted_types = read
    return SpanFileResult(
        score_span_chunk(span_chunk), span_chunk.columns.document_ids, gold_types, predicted_types
    )


def read_span_file_chunk(chunk: SpanFileChunk) -> tuple[SpanChunk, frozenset[str], frozenset[str]] | None:
    """The chunk's columns and the types named by gold and by the predictions, or None when not sure."""
    gold = _records(chunk.gold.read_lines(), chunk.documents)
    predicted = _records(chunk.predictions.read_lines(), chunk.documents)
    if gold is None or predicted is None:
        return None
    document_ids = _document_ids(gold)
    texts = _field(gold, "text")
    if document_ids is None or texts is None or set(map(type, texts)) != {str}:
        return None
    if _document_ids(predicted) != document_ids or not _same_texts(_field(predicted, "text"), texts):
        return None
    labels = _Labels(chunk.label_map)
    gold_spans = _spans(gold, texts, labels)
    predicted_spans = _spans(predicted, texts, labels)
    if gold_spans is None or predicted_spans is None:
        return None
    type_names = labels.type_names
    columns = SpanColumns(
        document_ids=document_ids,
        texts=texts,
        type_names=type_names,
        gold=gold_spans,
        predicted=predicted_spans,
    )
    positions = list(range(chunk.first_position, chunk.first_position + chunk.documents))
    return (
        SpanChunk(positions, columns, chunk.allowed_predicted_types),
        _types_of(gold_spans, type_names),
        _types_of(predicted_spans, type_names),
    )


def _records(lines: Sequence[bytes], documents: int) -> list[dict[str, Any]] | None:
    """Each line's JSON object, or None unless every line is one (a blank or malformed line is not).

    orjson directly, without `parse_json_bytes`' scan for long integers: where orjson reads a value
    differently from json (an integer beyond 64 bits), the value is either one this path ignores or
    an offset, and an offset that is not an int sends the chunk to the validating reader."""
    if len(lines) != documents:
        return None
    try:
        records = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:
        return None
    if set(map(type, records)) != {dict}:
        return None
    # An annotator makes the document one of several versions: the validating reader chooses.
    if set(_field(records, "annotator")) != {None}:
        return None
    return records


def _field(records: Sequence[dict[str, Any]], name: str) -> list[Any]:
    return list(map(dict.get, records, repeat(name)))


def _document_ids(records: Sequence[dict[str, Any]]) -> list[str] | None:
    document_ids = _field(records, "document_id")
    if set(map(type, document_ids)) != {str} or not all(document_ids):
        return None
    return document_ids


def _same_texts(predicted_texts: Sequence[Any], gold_texts: Sequence[str]) -> bool:
    """True when every prediction that carries its text carries the gold text."""
    return all(text is None or text == gold for text, gold in zip(predicted_texts, gold_texts, strict=True))


class _Labels:
    """Raw labels to codes of canonical types, shared by the two sides of a chunk; only known labels."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.label_map = LabelMap(mapping)
        self.type_names: list[str] = []
        self._code_of_type: dict[str, int] = {}
        self.code_of_label: dict[str, int] = {}

    def codes(self, labels: Sequence[Any]) -> np.ndarray | None:
        """The code of each label, or None when one is not a string or not in the label map."""
        distinct = set(labels)
        if set(map(type, distinct)) - {str}:
            return None
        for label in distinct - self.code_of_label.keys():
            canonical = self.label_map.lookup(label)
            if canonical is None:
                return None  # unknown: the validating reader warns about it
            code = self._code_of_type.setdefault(canonical, len(self.type_names))
            if code == len(self.type_names):
                self.type_names.append(canonical)
            self.code_of_label[label] = code
        return np.fromiter(map(self.code_of_label.__getitem__, labels), dtype=np.int64, count=len(labels))


def _spans(records: Sequence[dict[str, Any]], texts: Sequence[str], labels: _Labels) -> SpanSide | None:
    """One side's spans as columns, checked as the validating reader checks them, or None."""
    entities = _field(records, "entities")
    if set(map(type, entities)) != {list}:
        return None
    counts = np.fromiter(map(len, entities), dtype=np.int64, count=len(entities))
    flat = list(chain.from_iterable(entities))
    if flat and set(map(type, flat)) != {dict}:
        return None
    try:
        starts, ends, types = list(map(_START, flat)), list(map(_END, flat)), list(map(_TYPE, flat))
    except KeyError:
        return None
    if set(map(type, starts)) - {int} or set(map(type, ends)) - {int}:
        return None  # a float, a string, or a JSON true/false (bool is not int here)
    document = np.repeat(np.arange(len(records), dtype=np.int64), counts)
    start = np.array(starts, dtype=np.int64)
    end = np.array(ends, dtype=np.int64)
    text_lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if not ((start >= 0) & (start < end) & (end <= text_lengths[document])).all():
        return None
    if not _entity_texts_match(flat, document, starts, ends, texts):
        return None
    type_code = labels.codes(types)
    if type_code is None:
        return None
    return SpanSide(document=document, start=start, end=end, type_code=type_code)


def _entity_texts_match(
    flat: Sequence[dict[str, Any]],
    document: np.ndarray,
    starts: list[int],
    ends: list[int],
    texts: Sequence[str],
) -> bool:
    """True when every entity that carries a `text` carries the document's text at its offsets."""
    entity_texts = list(map(dict.get, flat, repeat("text")))
    if entity_texts.count(None) == len(entity_texts):
        return True
    documents = document.tolist()
    return all(
        entity_text is None
        or (type(entity_text) is str and texts[documents[k]][starts[k] : ends[k]] == entity_text)
        for k, entity_text in enumerate(entity_texts)
    )


def _types_of(side: SpanSide, type_names: Sequence[str]) -> frozenset[str]:
    return frozenset(type_names[code] for code in np.unique(side.type_code).tolist())
