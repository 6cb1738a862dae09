"""The reading half of the span evaluation's fast path: whoever scores a chunk decodes its byte
ranges with msgspec into `SpanColumns`, with none of the importers' objects. It accepts only what the
validating reader accepts without a word, and raises NotSure on anything else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any, Literal, NamedTuple

import msgspec
import numpy as np

from annotations.importers.labels import CANONICAL_TYPES, LabelMap
from metrics.engine.spans.columns import SpanColumns, SpanSide
from metrics.pipeline.phases import paused_garbage_collection
from metrics.pipeline.span_file_plan import NotSure, SpanFileChunk
from metrics.pipeline.spans import SpanChunk, SpanPartial, score_span_chunk


class LinesDoNotPair(NotSure):
    """A prediction line names another document than the gold line it was paired with."""


class SpanFileRead(NamedTuple):
    """A chunk as read: its columns, and its documents without a prediction line."""

    chunk: SpanChunk
    unpredicted_ids: Sequence[str]


def score_span_file_chunk(chunk: SpanFileChunk) -> tuple[SpanPartial, Sequence[str]]:
    """Read, check and score one chunk: its partial result and its documents without a prediction
    line. Raises NotSure (LinesDoNotPair: its lines did not pair)."""
    # A pool's worker runs with the collector on; a chunk's parsed lines are thousands of containers.
    with paused_garbage_collection():
        read = read_span_file_chunk(chunk)
        return score_span_chunk(read.chunk), read.unpredicted_ids


def read_span_file_chunk(chunk: SpanFileChunk) -> SpanFileRead:
    """The chunk as columns. Raises NotSure (LinesDoNotPair: its lines did not pair)."""
    gold = _documents(chunk.gold.line_views())
    document_ids = _document_ids(gold)
    texts = list(map(_TEXT, gold))
    if len(gold) != chunk.documents or None in texts:
        raise NotSure
    predicted_lines = chunk.predictions.line_views()
    present = [line for line in predicted_lines if line is not None]
    if _any_blank(present):
        raise LinesDoNotPair  # the validating reader passes over blank lines; pairing by id does too
    predicted = _documents(present)
    predicted_ids = _document_ids(predicted)
    if None in predicted_lines:  # documents without a prediction line predicted nothing
        found = iter(predicted)
        predicted = [
            _Document(document_id, []) if line is None else next(found)
            for line, document_id in zip(predicted_lines, document_ids, strict=True)
        ]
    if list(map(_DOCUMENT_ID, predicted)) != document_ids:
        raise LinesDoNotPair
    if not _same_texts(list(map(_TEXT, predicted)), texts):
        raise NotSure
    labels = _Labels(chunk.label_map)
    columns = SpanColumns(
        document_ids=document_ids,
        texts=texts,
        type_names=labels.type_names,
        gold=_spans(gold, texts, labels),
        predicted=_spans(predicted, texts, labels),
    )
    positions = list(range(chunk.first_position, chunk.first_position + chunk.documents))
    return SpanFileRead(
        SpanChunk(positions, columns, chunk.allowed_predicted_types, chunk.keep_leaked),
        # Most chunks predict every document: none of their ids crosses again, nor is hashed again.
        [] if len(predicted_ids) == len(document_ids) else sorted(set(document_ids) - set(predicted_ids)),
    )


class _Entity(msgspec.Struct, gc=False):
    """An entity as the validating reader accepts it: exact JSON types (a true/false or a float is not
    an int), other fields ignored, `text` null or absent alike. Ints and strings hold no cycle, so the
    collector need not track it (decoding and freeing measured 9% faster)."""

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


# Raw labels this process has decoded: a chunk's entity types are matched among them.
_LABELS_SEEN: set[str] = set(CANONICAL_TYPES)


@lru_cache(maxsize=1)
def _decoder_knowing(labels: frozenset[str]) -> Callable[[bytes | memoryview], _Document]:
    """`_decode` with entity types among `labels`: msgspec matches each in C and gives the one str it
    holds, where it made a new str an entity, hashed again to look its code up (100,000 documents
    read 0.15-0.2 s faster, bench/spans/README.md)."""
    label = Literal[tuple(sorted(labels))]  # type: ignore[valid-type]
    entity = msgspec.defstruct("_Entity", [("entity_type", label)], bases=(_Entity,), gc=False)
    document = msgspec.defstruct("_Document", [("entities", list[entity])], bases=(_Document,))
    return msgspec.json.Decoder(document).decode


def _documents(lines: Sequence[bytes | memoryview]) -> list[_Document]:
    """Each line's document; NotSure unless every line is one (a blank or malformed line is not)."""
    try:
        try:
            documents = list(map(_decoder_knowing(frozenset(_LABELS_SEEN)), lines))
        except msgspec.ValidationError:  # a label not seen yet, or a wrong value: `_decode` decides
            documents = list(map(_decode, lines))
            if len(_LABELS_SEEN) < 1_000:  # bounded: a file may hold a label an entity
                _LABELS_SEEN.update(map(_TYPE, chain.from_iterable(map(_ENTITIES, documents))))
    except msgspec.DecodeError:
        raise NotSure from None
    # An annotator makes the document one of several versions: the validating reader chooses.
    if set(map(_ANNOTATOR, documents)) - {None}:
        raise NotSure
    return documents


def _any_blank(lines: Sequence[memoryview]) -> bool:
    try:  # a line of JSON starts with "{": whether any starts with a space is asked in C
        if _WHITESPACE.isdisjoint(map(_FIRST_BYTE, lines)):
            return False
    except IndexError:
        return True  # an empty line
    return any(line[0] in _WHITESPACE and bytes(line).isspace() for line in lines)


_FIRST_BYTE = itemgetter(0)


_WHITESPACE = frozenset(b" \t\n\r\x0b\x0c")  # bytes.isspace()'s


def _document_ids(documents: Sequence[_Document]) -> list[str]:
    document_ids = list(map(_DOCUMENT_ID, documents))
    if not all(document_ids):
        raise NotSure
    return document_ids


def _same_texts(predicted_texts: Sequence[str | None], gold_texts: Sequence[str]) -> bool:
    """True when every prediction that carries its text carries the gold text."""
    carried = len(predicted_texts) - predicted_texts.count(None)
    if carried in (0, len(predicted_texts)):  # none or all: compared in C
        return carried == 0 or list(predicted_texts) == list(gold_texts)
    return all(text is None or text == gold for text, gold in zip(predicted_texts, gold_texts, strict=True))


class _Labels:
    """Raw labels to codes of canonical types, shared by the two sides of a chunk; only known labels."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.label_map = LabelMap(mapping)
        self.type_names: list[str] = []
        self._code_of_type: dict[str, int] = {}
        self.code_of_label: dict[str, int] = {}

    def codes(self, entities: Sequence[_Entity]) -> np.ndarray:
        """The code of each entity's label; NotSure when one is not in the label map."""
        try:  # labels seen before: no pass to find the new ones, nor a list of them
            return np.fromiter(
                map(self.code_of_label.__getitem__, map(_TYPE, entities)), dtype=np.int64, count=len(entities)
            )
        except KeyError:
            pass
        labels = list(map(_TYPE, entities))  # strings: msgspec checked each entity_type
        for label in set(labels) - self.code_of_label.keys():
            canonical = self.label_map.lookup(label)
            if canonical is None:
                raise NotSure  # unknown: the validating reader warns about it
            code = self._code_of_type.setdefault(canonical, len(self.type_names))
            if code == len(self.type_names):
                self.type_names.append(canonical)
            self.code_of_label[label] = code
        return np.fromiter(map(self.code_of_label.__getitem__, labels), dtype=np.int64, count=len(labels))


def _spans(documents: Sequence[_Document], texts: Sequence[str], labels: _Labels) -> SpanSide:
    """One side's spans as columns, checked as the validating reader checks them (else NotSure)."""
    entities = list(map(_ENTITIES, documents))
    counts = np.fromiter(map(len, entities), dtype=np.int64, count=len(entities))
    flat = list(chain.from_iterable(entities))
    try:
        start = np.fromiter(map(_START, flat), dtype=np.int64, count=len(flat))
        end = np.fromiter(map(_END, flat), dtype=np.int64, count=len(flat))
    except OverflowError:  # an offset beyond 64 bits
        raise NotSure from None
    document = np.repeat(np.arange(len(documents), dtype=np.int64), counts)
    text_lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if not ((start >= 0) & (start < end) & (end <= text_lengths[document])).all():
        raise NotSure
    if not _entity_texts_match(flat, document, start, end, texts):
        raise NotSure
    return SpanSide(document=document, start=start, end=end, type_code=labels.codes(flat))


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
