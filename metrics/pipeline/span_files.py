"""Span chunks read straight from two plain JSONL files, as columns, by whoever scores them.

The fast path of the offline span evaluation. When gold and predictions are plain `.jsonl`/`.ndjson`
files, a chunk is a byte range of gold and the lines of the predictions that pair with it: the same
line numbers when both files have as many lines (the usual shape of a pipeline's output; the reader
checks the ids agree), else each prediction line found by the document id its first bytes name. The
process that scores the chunk reads those bytes itself, decodes each line with msgspec (a transient
struct per entity) and builds the chunk's `SpanColumns`, with none of the importers' objects
(`SpanDocument`, `SpanAnnotation`). Reading then runs in every worker of a pool, and no process ever
holds the whole gold text (a chunk's lines at a time).

It accepts only what the validating reader (`annotations.importers.spans`) accepts without a word:
anything it is not sure of (a malformed line, a blank line, a bad offset, a mismatching text, an
unknown label, an annotator, a duplicate or unpaired document...) makes it answer "not sure" (None),
and the caller reads both inputs again with the validating reader, which words every problem as it
always has. Its results are those of the validating path, document by document.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import orjson

from annotations.importers.labels import LabelMap
from metrics.engine.spans.columns import SpanColumns, SpanSide
from metrics.pipeline import spans as span_pipeline
from metrics.pipeline.phases import paused_garbage_collection
from metrics.pipeline.spans import SpanChunk, SpanPartial, score_span_chunk

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
# Gold bytes per chunk at most (beside CHUNK_DOCUMENTS documents at most): 1,024 documents of the
# bench corpora are 1.3-2.3 MB.
CHUNK_BYTES = 1 << 23
# Newlines are found a block at a time, so the scan's temporary arrays stay a few MB.
SCAN_BLOCK = 1 << 22
_NEWLINE = 0x0A
# A line that starts with its document id, unescaped: `{"document_id": "doc-1", ...`.
_LEADING_ID = re.compile(rb'\{\s*"document_id"\s*:\s*"([^"\\]*)"')


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
class ScatteredLines:
    """One line of a file per document, by byte offsets (`start` -1: the document has no line)."""

    path: str
    starts: np.ndarray
    ends: np.ndarray

    def read_lines(self) -> list[bytes | None]:
        with open(self.path, "rb") as file:
            descriptor = file.fileno()
            return [
                None if start < 0 else os.pread(descriptor, end - start, start)
                for start, end in zip(self.starts.tolist(), self.ends.tolist(), strict=True)
            ]


class LinesDoNotPair(Exception):
    """A prediction line names another document than the gold line it was paired with."""


@dataclass(frozen=True)
class SpanFileChunk:
    """Documents `first_position ...` of gold and the predictions' lines that pair with them: the same
    lines of the predictions (a `ByteRange`), or each document's line wherever it is."""

    first_position: int
    documents: int
    gold: ByteRange
    predictions: ByteRange | ScatteredLines
    label_map: dict[str, str]  # normalized label -> canonical type (LabelMap.mapping as a plain dict)
    allowed_predicted_types: frozenset[str] | None = None


@dataclass
class SpanFileResult:
    """A chunk's partial result, its documents' ids (all, and those predicted) and the types each side
    named. `partial` None: not sure, read again; `unpaired`: because the lines did not pair."""

    partial: SpanPartial | None
    document_ids: Sequence[str] = ()
    predicted_ids: Sequence[str] = ()
    gold_types: frozenset[str] = frozenset()
    predicted_types: frozenset[str] = frozenset()
    unpaired: bool = False


def plan_span_file_chunks(
    gold_path: Any,
    predictions_path: Any,
    *,
    label_map: LabelMap,
    size: int | None = None,
    by_document_id: bool = False,
) -> list[SpanFileChunk] | None:
    """The chunks of two plain JSONL files, or None for any other input.

    Line k of the predictions goes with line k of gold when both have as many lines (the readers
    check that the ids agree) unless `by_document_id`; else each prediction line goes with the gold
    line its `document_id` names (None when some line names no document, an unknown or a repeated one).
    """
    if not (_plain_jsonl(gold_path) and _plain_jsonl(predictions_path)):
        return None
    gold_ends = _without_trailing_blank_lines(str(gold_path), line_ends(str(gold_path)))
    predicted_ends = _without_trailing_blank_lines(str(predictions_path), line_ends(str(predictions_path)))
    if len(gold_ends) == 0 or len(predicted_ends) == 0:
        return None
    size = size or span_pipeline.CHUNK_DOCUMENTS  # read at call time: tests cut small chunks
    gold_starts = np.concatenate(([0], gold_ends[:-1]))
    by_line = len(gold_ends) == len(predicted_ends) and not by_document_id
    if by_line:
        predicted_starts = np.concatenate(([0], predicted_ends[:-1]))
    else:
        found = _predicted_lines_by_gold_line(
            str(gold_path), gold_starts, gold_ends, str(predictions_path), predicted_ends
        )
        if found is None:
            return None
        predicted_starts, predicted_ends = found
    chunks = []
    first = 0
    while first < len(gold_ends):
        # At most `size` documents, and no more gold bytes than CHUNK_BYTES unless one line is longer:
        # a chunk of long documents stays as small in memory as one of short ones.
        fitting = int(np.searchsorted(gold_ends, gold_starts[first] + CHUNK_BYTES, side="right"))
        last = min(first + size, max(fitting, first + 1))
        predictions: ByteRange | ScatteredLines = (
            ByteRange(str(predictions_path), int(predicted_starts[first]), int(predicted_ends[last - 1]))
            if by_line
            else ScatteredLines(
                str(predictions_path), predicted_starts[first:last].copy(), predicted_ends[first:last].copy()
            )
        )
        chunks.append(
            SpanFileChunk(
                first_position=first,
                documents=last - first,
                gold=ByteRange(str(gold_path), int(gold_starts[first]), int(gold_ends[last - 1])),
                predictions=predictions,
                label_map=dict(label_map.mapping),
            )
        )
        first = last
    return chunks


def _predicted_lines_by_gold_line(
    gold_path: str,
    gold_starts: np.ndarray,
    gold_ends: np.ndarray,
    predictions_path: str,
    predicted_ends: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """For each gold line, the byte offsets of the prediction line naming its document (-1: none).
    Blank prediction lines are passed over, as the validating reader passes over them."""
    gold_ids = line_document_ids(gold_path, gold_starts, gold_ends)
    predicted_starts = np.concatenate(([0], predicted_ends[:-1]))
    predicted_ids = line_document_ids(predictions_path, predicted_starts, predicted_ends)
    if gold_ids is None or predicted_ids is None or None in gold_ids:
        return None
    named = np.fromiter((document_id is not None for document_id in predicted_ids), dtype=bool)
    predicted_ids = [document_id for document_id in predicted_ids if document_id is not None]
    predicted_starts, predicted_ends = predicted_starts[named], predicted_ends[named]
    line_of = {document_id: line for line, document_id in enumerate(gold_ids)}
    if len(line_of) != len(gold_ids):
        return None
    try:
        lines = np.fromiter(map(line_of.__getitem__, predicted_ids), dtype=np.int64, count=len(predicted_ids))
    except KeyError:
        return None  # a prediction for a document that is not in gold
    if len(np.unique(lines)) != len(lines):
        return None
    starts = np.full(len(gold_ids), -1, dtype=np.int64)
    ends = np.full(len(gold_ids), -1, dtype=np.int64)
    starts[lines] = predicted_starts
    ends[lines] = predicted_ends
    return starts, ends


def line_document_ids(path: str, starts: np.ndarray, ends: np.ndarray) -> list[str | None] | None:
    """The `document_id` each line names (None for a blank line), or None when a line names none.
    Read from the line's first bytes when it starts with its id: the reader of the chunk checks it
    against the parsed line."""
    ids: list[str | None] = []
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            match = _LEADING_ID.match(mapped, start, end)
            if match is None and mapped[start:end].isspace():
                ids.append(None)
                continue
            try:
                document_id = (
                    match.group(1).decode("utf-8")
                    if match
                    else orjson.loads(mapped[start:end]).get("document_id")
                )
            except (UnicodeDecodeError, orjson.JSONDecodeError, AttributeError):
                return None
            if type(document_id) is not str:
                return None
            ids.append(document_id)
    return ids


def _without_trailing_blank_lines(path: str, ends: np.ndarray) -> np.ndarray:
    """`ends` without the blank lines that end the file (an editor's extra newline), which the
    validating reader passes over."""
    starts = np.concatenate(([0], ends[:-1]))
    last = len(ends)
    with open(path, "rb") as file:
        while last and _blank(
            os.pread(file.fileno(), int(ends[last - 1] - starts[last - 1]), int(starts[last - 1]))
        ):
            last -= 1
    return ends[:last]


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
            ends = []
            for offset in range(0, size, SCAN_BLOCK):
                ends.append(np.flatnonzero(data[offset : offset + SCAN_BLOCK] == _NEWLINE) + (offset + 1))
                _forget_pages(mapped, offset, min(SCAN_BLOCK, size - offset))
            del data  # the mapping cannot close while an array views it
    found = np.concatenate(ends)
    if len(found) == 0 or found[-1] != size:
        found = np.append(found, size)
    return found.astype(np.int64)


def _forget_pages(mapped: mmap.mmap, offset: int, length: int) -> None:
    """Unmap pages already scanned from this process (they stay in the page cache): a file mapped
    whole would count, page by page, in the resident size of the process that scans it."""
    if hasattr(mmap, "MADV_DONTNEED") and offset % mmap.PAGESIZE == 0:
        mapped.madvise(mmap.MADV_DONTNEED, offset, length)


def score_span_file_chunk(chunk: SpanFileChunk) -> SpanFileResult:
    """Read, check and score one chunk: its partial result, or a result without one when not sure."""
    # A pool's worker runs with the collector on; a chunk's parsed lines are thousands of containers.
    with paused_garbage_collection():
        try:
            read = read_span_file_chunk(chunk)
        except LinesDoNotPair:
            return SpanFileResult(None, unpaired=True)
        if read is None:
            return SpanFileResult(None)
        return SpanFileResult(
            score_span_chunk(read.chunk),
            read.chunk.columns.document_ids,
            read.predicted_ids,
            read.gold_types,
            read.predicted_types,
        )


@dataclass
class ReadSpanFileChunk:
    """A chunk as read: its columns, the documents that have a prediction line, the types named."""

    chunk: SpanChunk
    predicted_ids: list[str]
    gold_types: frozenset[str]
    predicted_types: frozenset[str]


def read_span_file_chunk(chunk: SpanFileChunk) -> ReadSpanFileChunk | None:
    """The chunk as columns, or None when not sure. Raises LinesDoNotPair when a prediction line names
    another document than its gold line."""
    gold = _documents(chunk.gold.read_lines())
    if gold is None or len(gold) != chunk.documents:
        return None
    document_ids = _document_ids(gold)
    texts = list(map(_TEXT, gold))
    if document_ids is None or None in texts:
        return None
    predicted_lines = chunk.predictions.read_lines()
    if isinstance(chunk.predictions, ByteRange) and _any_blank(predicted_lines):
        raise LinesDoNotPair  # the validating reader passes over blank lines; pairing by id does too
    predicted = _documents([line for line in predicted_lines if line is not None])
    if predicted is None:
        return None
    predicted_ids = _document_ids(predicted)
    if predicted_ids is None:
        return None
    if None in predicted_lines:  # documents without a prediction line predicted nothing
        found = iter(predicted)
        predicted = [
            _Document(document_id, []) if line is None else next(found)
            for line, document_id in zip(predicted_lines, document_ids, strict=True)
        ]
    if list(map(_DOCUMENT_ID, predicted)) != document_ids:
        raise LinesDoNotPair
    if not _same_texts(list(map(_TEXT, predicted)), texts):
        return None
    labels = _Labels(chunk.label_map)
    gold_spans = _spans(gold, texts, labels)
    predicted_spans = _spans(predicted, texts, labels)
    if gold_spans is None or predicted_spans is None:
        return None
    columns = SpanColumns(
        document_ids=document_ids,
        texts=texts,
        type_names=labels.type_names,
        gold=gold_spans,
        predicted=predicted_spans,
    )
    positions = list(range(chunk.first_position, chunk.first_position + chunk.documents))
    return ReadSpanFileChunk(
        SpanChunk(positions, columns, chunk.allowed_predicted_types),
        predicted_ids,
        _types_of(gold_spans, labels.type_names),
        _types_of(predicted_spans, labels.type_names),
    )


class _Entity(msgspec.Struct):
    """An entity as the validating reader accepts it: exact JSON types (a true/false or a float is not
    an int), other fields ignored, `text` null or absent alike."""

    start: int
    end: int
    entity_type: str
    text: str | None = None


class _Document(msgspec.Struct):
    document_id: str
    entities: list[_Entity]
    text: str | None = None
    annotator: Any = None


# msgspec decodes a line straight into these and checks every type in C: about 40% less CPU than
# orjson's dicts checked in Python (bench/spans/README.md). It reads values as json does (checked
# for integers beyond 64 bits, duplicate keys, escapes and every code point); it rejects what json
# accepts beyond JSON (NaN, lone surrogates), and any line it rejects goes to the validating reader.
_decode = msgspec.json.Decoder(_Document).decode
_DOCUMENT_ID, _TEXT, _ENTITIES, _ANNOTATOR = (
    attrgetter("document_id"),
    attrgetter("text"),
    attrgetter("entities"),
    attrgetter("annotator"),
)
_START, _END, _TYPE = attrgetter("start"), attrgetter("end"), attrgetter("entity_type")


def _documents(lines: Sequence[bytes]) -> list[_Document] | None:
    """Each line's document, or None unless every line is one (a blank or malformed line is not)."""
    try:
        documents = list(map(_decode, lines))
    except msgspec.DecodeError:
        return None
    # An annotator makes the document one of several versions: the validating reader chooses.
    if set(map(_ANNOTATOR, documents)) - {None}:
        return None
    return documents


def _blank(line: bytes) -> bool:
    return not line or line.isspace()


def _any_blank(lines: Sequence[bytes]) -> bool:
    return b"" in lines or any(map(bytes.isspace, lines))


def _document_ids(documents: Sequence[_Document]) -> list[str] | None:
    document_ids = list(map(_DOCUMENT_ID, documents))
    return document_ids if all(document_ids) else None


def _same_texts(predicted_texts: Sequence[str | None], gold_texts: Sequence[str]) -> bool:
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


def _spans(documents: Sequence[_Document], texts: Sequence[str], labels: _Labels) -> SpanSide | None:
    """One side's spans as columns, checked as the validating reader checks them, or None."""
    entities = list(map(_ENTITIES, documents))
    counts = np.fromiter(map(len, entities), dtype=np.int64, count=len(entities))
    flat = list(chain.from_iterable(entities))
    try:
        start = np.array(list(map(_START, flat)), dtype=np.int64)
        end = np.array(list(map(_END, flat)), dtype=np.int64)
    except OverflowError:  # an offset beyond 64 bits
        return None
    document = np.repeat(np.arange(len(documents), dtype=np.int64), counts)
    text_lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if not ((start >= 0) & (start < end) & (end <= text_lengths[document])).all():
        return None
    if not _entity_texts_match(flat, document, start, end, texts):
        return None
    type_code = labels.codes(list(map(_TYPE, flat)))
    if type_code is None:
        return None
    return SpanSide(document=document, start=start, end=end, type_code=type_code)


def _entity_texts_match(
    flat: Sequence[_Entity], document: np.ndarray, start: np.ndarray, end: np.ndarray, texts: Sequence[str]
) -> bool:
    """True when every entity that carries a `text` carries the document's text at its offsets."""
    entity_texts = list(map(_TEXT, flat))
    if entity_texts.count(None) == len(entity_texts):
        return True
    documents, starts, ends = document.tolist(), start.tolist(), end.tolist()
    return all(
        entity_text is None or texts[documents[k]][starts[k] : ends[k]] == entity_text
        for k, entity_text in enumerate(entity_texts)
    )


def _types_of(side: SpanSide, type_names: Sequence[str]) -> frozenset[str]:
    return frozenset(type_names[code] for code in np.unique(side.type_code).tolist())
