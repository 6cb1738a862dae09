"""A chunk's documents laid end to end on one line of code points, and the interval arithmetic the batch
scorer (`batch.py`) does on it.

Document i occupies [base_i, base_i + len(text_i)), and one separator code point follows it, so two
documents' intervals never overlap or touch, and a run of letters never crosses from one to the next.
A span's global coordinates are its offsets plus its document's base. Everything sorted by global
coordinate is therefore sorted by document too: counts per document are differences of positions
found at the documents' bases, and a union segment, which never crosses a document, carries the
document (or type row) of the span that opened it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from metrics.engine.spans.columns import SpanSide

# The de-identification harness leaves these characters out of the `scored` character counts: a
# missed comma or space leaks nothing. docs/semantics.md section 1, `chars`.
LEFT_OUT_CHARACTERS = " ,.!?:;-()\"'\n\t\r"
SEPARATOR = "\n"  # left out and not a letter: it adds nothing to any count
# Per Latin-1 code point: scored (not in LEFT_OUT_CHARACTERS), and str.isalnum() (the token pattern
# `[^\W_]+` is runs of these). Every left-out character is ASCII.
_LATIN1_SCORED = np.array([chr(c) not in LEFT_OUT_CHARACTERS for c in range(256)], dtype=np.uint8)
_LATIN1_ALNUM = np.array([chr(c).isalnum() for c in range(256)], dtype=np.uint8)
INT = np.int64
# Code points classified per np.take (`character_classes`): np.take first turns its indices into
# 64-bit ones, and a block's stay in the cache.
TAKE_BLOCK = 1 << 16


class Line:
    """The texts of a chunk on one line: where each document starts, which code points are scored
    (prefix sums), and where runs of letters and digits start and end."""

    def __init__(self, texts: Sequence[str], n_chars: np.ndarray) -> None:
        n_docs = len(texts)
        self.n_chars = n_chars
        self.bases = np.zeros(n_docs, dtype=INT)
        np.cumsum(n_chars[:-1] + 1, out=self.bases[1:])
        joined = SEPARATOR.join([*texts, ""])  # each text followed by one: a single copy
        self.length = len(joined)  # > every global coordinate
        # Where each document's coordinates start, and after the last document, the line's end.
        self.boundaries = np.append(self.bases, self.length)
        scored, alnum = character_classes(joined)
        self.scored_prefix = PackedPrefix(scored)
        self.alnum = alnum
        # Runs of letters and digits: where each starts and ends. The line ends with a separator, so
        # every run ends on it, and starts and ends alternate among the places where the class changes.
        changes = np.flatnonzero(alnum[1:] != alnum[:-1]) + 1
        if self.length and alnum[0]:
            changes = np.concatenate(([0], changes))
        self.run_starts, self.run_ends = changes[0::2], changes[1::2]
        # How many runs start before a position: the span's pieces are counted without a search. A
        # run starts where a letter follows no letter: in the packed words, a bit set whose lower
        # neighbour (the word below's top bit, for bit 0) is clear.
        letters = packed_words(alnum)
        below = letters << np.uint64(1)
        below[1:] |= letters[:-1] >> np.uint64(63)
        self.runs_before = PackedPrefix(words=letters & ~below)

    def scored_between(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        return self.scored_prefix[end] - self.scored_prefix[start]

    def per_document(self, points: np.ndarray, scale: int = 1) -> np.ndarray:
        """How many of these sorted points (global coordinates times `scale`, plus less than `scale`)
        fall in each document."""
        return np.diff(np.searchsorted(points, self.boundaries * scale))


class PackedPrefix:
    """`prefix[positions]`: how many flags (scored code points, starts of runs) lie before each of
    these positions of the line.

    The flags are packed 64 to a word, with the count of those before each word: a position's count
    is its word's plus the flags below it in its word. A prefix sum of every code point took 4 bytes a
    code point and a sequential pass (cumsum) that cost more than all the look-ups; a binary search in
    the flagged positions costs several times a look-up.
    """

    def __init__(self, flags: np.ndarray | None = None, *, words: np.ndarray | None = None) -> None:
        """The prefix of these flags, or of flags already packed (`packed_words`)."""
        self.words = packed_words(flags) if words is None else words
        self.before = np.zeros(len(self.words), dtype=INT)
        np.cumsum(np.bitwise_count(self.words[:-1]), out=self.before[1:])

    def __getitem__(self, positions: np.ndarray) -> np.ndarray:
        word = positions >> 6
        below = np.left_shift(np.uint64(1), (positions & 63).astype(np.uint64)) - np.uint64(1)
        return self.before[word] + np.bitwise_count(self.words[word] & below)


def packed_words(flags: np.ndarray) -> np.ndarray:
    """Flags packed 64 to a word: position p is bit p % 64 of word p // 64, and one word to spare
    (zeros), as the line's end is a position too."""
    packed = np.packbits(flags, bitorder="little")
    words = np.zeros(len(packed) // 8 + 1, dtype="<u8")
    words.view(np.uint8)[: len(packed)] = packed
    return words


class SortedSpans:
    """One side's spans of a chunk, in global coordinates, sorted by (start, end, type code),
    type codes numbered in the types' sorted order.

    `key` = (start * (line length + 1) + end) * n_types + code, sorted; `bounds` = key // n_types.
    """

    def __init__(self, side: SpanSide, line: Line, n_types: int) -> None:
        doc, start, end, code = side.document, side.start, side.end, side.type_code
        bases = line.bases[doc]
        scale = line.length + 1
        key = ((start + bases) * scale + end + bases) * n_types + code
        # Spans mostly come in order already: a stable sort (timsort) finds the runs. Equal keys are
        # equal spans, so which of them comes first changes nothing.
        order = np.argsort(key, kind="stable")
        self.key = key[order]
        self.bounds = self.key // n_types
        self.doc = doc[order]
        self.local_start = start[order]
        self.local_end = end[order]
        self.code = code[order]
        base = bases[order]
        self.start = self.local_start + base
        self.end = self.local_end + base

    def __len__(self) -> int:
        return len(self.start)

    def by_type(self) -> np.ndarray:
        """The order of the spans by (type code, start, end): stable by code, which a radix sort does
        in one pass over codes of 8 or 16 bits."""
        if len(self.code) == 0 or self.code.max() >= 1 << 16:
            return np.argsort(self.code, kind="stable")
        small = np.uint8 if self.code.max() < 1 << 8 else np.uint16
        return np.argsort(self.code.astype(small), kind="stable")


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (np.unique's hash path measured several times slower here). The values
    are mostly in order already: a stable sort (timsort) finds the runs."""
    return distinct_sorted(np.sort(values, kind="stable"))


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values of sorted values."""
    if len(values) < 2:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def member_sorted(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """For each value, whether it occurs in pool; both sorted (sorted queries search fastest)."""
    if len(pool) == 0 or len(values) == 0:
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(pool, values)
    np.minimum(at, len(pool) - 1, out=at)
    return pool[at] == values


def merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Union of intervals sorted by start; touching intervals merge (as `merge_ranges`). Returns
    each segment's start and end and the index of the interval that opened it."""
    if len(start) == 0:
        return start, end, np.zeros(0, dtype=INT)
    running_end = np.maximum.accumulate(end)
    opens = np.empty(len(start), dtype=bool)
    opens[0] = True
    np.greater(start[1:], running_end[:-1], out=opens[1:])
    first = np.flatnonzero(opens)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = len(start) - 1
    return start[first], running_end[last], first


def merge_unsorted(
    start: np.ndarray, end: np.ndarray, order: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`merge` of intervals in any order; the opening interval's index is into the given order.
    `order`, when known, sorts the intervals by start (ties in the given order)."""
    if order is None:
        order = np.argsort(start, kind="stable")
    union_start, union_end, first = merge(start[order], end[order])
    return union_start, union_end, order[first]


def per(index: np.ndarray, size: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Sum of weights (or count) per index value, as int64."""
    if weights is None:
        return np.bincount(index, minlength=size).astype(INT)
    return np.bincount(index, weights=weights, minlength=size).astype(INT)


class Cover:
    """A merged interval set, answering for many intervals at once how much of each it covers."""

    def __init__(self, start: np.ndarray, end: np.ndarray, scored_prefix: PackedPrefix | None = None):
        self.start, self.end = start, end
        self.prefix = scored_prefix
        if scored_prefix is not None:
            self.before = np.concatenate(([0], np.cumsum(end - start)))[:-1]
            scored = scored_prefix[end] - scored_prefix[start]
            self.scored_before = np.concatenate(([0], np.cumsum(scored)))[:-1]

    def _last_starting_at_or_before(self, x: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.start, x, side="right") - 1

    def covered_below(self, x: np.ndarray) -> np.ndarray:
        """The code points of the set below x, for each x. Needs the line's scored prefix."""
        if len(self.start) == 0:
            return np.zeros(len(x), dtype=INT)
        return self._below(x, self._last_starting_at_or_before(x), scored=False)

    def _below(self, x: np.ndarray, k: np.ndarray, scored: bool) -> np.ndarray:
        """`covered_below`, k: the last segment starting at or before each x (-1: none)."""
        inside = k >= 0
        k = np.where(inside, k, 0)
        cut = np.minimum(x, self.end[k])
        if scored:
            return np.where(inside, self.scored_before[k] + self.prefix[cut] - self.prefix[self.start[k]], 0)
        return np.where(inside, self.before[k] + cut - self.start[k], 0)

    def against(self, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each interval: whether the set `covers` it, whether it `overlaps` it, and the set's
        scored code points inside it; two searches where the four questions asked one each."""
        if len(self.start) == 0:
            return (
                np.zeros(len(start), dtype=bool),
                np.zeros(len(start), dtype=bool),
                np.zeros(len(start), INT),
            )
        at_start = self._last_starting_at_or_before(start)
        at_end = self._last_starting_at_or_before(end)
        covers = (at_start >= 0) & (self.end[np.maximum(at_start, 0)] >= end)
        # The last segment starting before the end: at_end, unless that one starts at the end itself.
        before_end = at_end - ((at_end >= 0) & (self.start[np.maximum(at_end, 0)] == end))
        overlaps = (before_end >= 0) & (self.end[np.maximum(before_end, 0)] > start)
        scored = self._below(end, at_end, True) - self._below(start, at_start, True)
        return covers, overlaps, scored

    def overlaps(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        if len(self.start) == 0:
            return np.zeros(len(start), dtype=bool)
        k = np.searchsorted(self.start, end, side="left") - 1
        return (k >= 0) & (self.end[np.maximum(k, 0)] > start)


def character_classes(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(scored, alnum) for each code point of the text, as boolean arrays."""
    try:
        latin1 = text.encode("latin-1")
    except UnicodeEncodeError:
        classes = _classes_beyond_latin1(text)
    else:
        # A byte per code point: bytes.translate looks the classes up without numpy's 64-bit indices.
        classes = np.frombuffer(latin1.translate(_LATIN1_CLASS_BYTES), dtype=np.uint8)
    return (classes & _SCORED).view(bool), (classes >> 1).view(bool)


def _classes_beyond_latin1(text: str) -> np.ndarray:
    """The class bits of a text with code points beyond Latin-1. Within the Basic Multilingual Plane
    UTF-16 is a code unit per code point: half the bytes of UTF-32 and no search for the largest."""
    utf16 = text.encode("utf-16-le")
    if len(utf16) == 2 * len(text):
        code_points = np.frombuffer(utf16, dtype=np.uint16)
        table = _classes_up_to(0xFFFF)
    else:  # surrogate pairs: a code point beyond the plane
        code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        table = _classes_up_to(int(code_points.max()))
    classes = np.empty(len(code_points), dtype=np.uint8)
    # A block at a time (TAKE_BLOCK). The table covers every code point: "clip" never clips, it only
    # skips the bounds check.
    for start in range(0, len(code_points), TAKE_BLOCK):
        block = slice(start, start + TAKE_BLOCK)
        np.take(table, code_points[block], out=classes[block], mode="clip")
    return classes


_SCORED, _ALNUM = 1, 2
_classes: list[np.ndarray] = [_LATIN1_SCORED * _SCORED + _LATIN1_ALNUM * _ALNUM]
_LATIN1_CLASS_BYTES = _classes[0].tobytes()


def _classes_up_to(code_point: int) -> np.ndarray:
    """Per code point up to at least this one: _SCORED | _ALNUM bits (uint8). Grown on demand and kept:
    str.isalnum() is asked once per code point per process, not once per occurrence."""
    table = _classes[0]
    if code_point < len(table):
        return table
    size = max(1 << 16, 1 << code_point.bit_length())
    grown = np.empty(min(size, sys.maxunicode + 1), dtype=np.uint8)
    grown[: len(table)] = table
    # Every left-out character is ASCII: above Latin-1 every code point is scored.
    grown[len(table) :] = _SCORED + _ALNUM * np.fromiter(
        (chr(c).isalnum() for c in range(len(table), len(grown))),
        dtype=np.uint8,
        count=len(grown) - len(table),
    )
    _classes[0] = grown
    return grown


def token_pieces(spans: SortedSpans, line: Line) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(piece start, piece end, span index) of every token piece of every span: the runs of letters
    and digits inside [start, end), cut at the span bounds (as `span_tokens`)."""
    if len(spans) == 0:
        empty = np.zeros(0, dtype=INT)
        return empty, empty, empty
    run_starts = line.run_starts
    head = line.alnum[spans.start]  # the span starts inside a run: its first piece starts at the span
    first_inner = line.runs_before[spans.start + 1]  # runs starting at or before the span's start
    stop_inner = line.runs_before[spans.end]  # runs starting before its end
    per_span = (stop_inner - first_inner) + head
    span_index = np.repeat(np.arange(len(spans), dtype=INT), per_span)
    position = np.arange(len(span_index), dtype=INT) - np.repeat(np.cumsum(per_span) - per_span, per_span)
    is_head = head[span_index] & (position == 0)
    # The run each piece lies in: for a head piece the run the span starts in (first_inner - 1).
    run = first_inner[span_index] + position - head[span_index]
    piece_start = np.where(is_head, spans.start[span_index], run_starts[run])
    piece_end = np.minimum(line.run_ends[run], spans.end[span_index])
    return piece_start, piece_end, span_index
