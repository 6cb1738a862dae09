"""Interval arithmetic on code point offsets, without a loop over characters.

A set of code points is held as merged intervals: two parallel sorted lists `starts` and `ends`
(end exclusive) of disjoint, non-touching intervals. Every count the span engine needs (union sizes,
intersections, "is this span covered", "does this span touch a prediction") is a sweep or a bisection
over these lists, so the cost grows with the number of spans, not with the length of the text.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter, lt

from metrics.engine.spans.code_point_line import LEFT_OUT_CHARACTERS

# Left-out characters are counted on a byte mask of the text (b"\0" left out, b"\1" scored) with
# bytes.count: one C call per range. The mask needs the text to fit Latin-1 (one byte per code point,
# so byte offsets are code point offsets); other texts are counted by regex on each range.
# (str.translate on the whole text would be a per-character dictionary lookup for any text that is
# not pure ASCII, the slowest step by far.)
_LATIN1_MASK = bytes(0 if chr(byte) in LEFT_OUT_CHARACTERS else 1 for byte in range(256))
_SCORED_PATTERN = re.compile("[^" + re.escape(LEFT_OUT_CHARACTERS) + "]")

# i2b2 2014 style tokens: runs of letters and digits. `[^\W_]` is exactly `str.isalnum()` per
# character (both are Unicode alpha, decimal, digit or numeric), which gives a fast path below.
TOKEN_PATTERN = re.compile(r"[^\W_]+")
_MATCH_SPAN = re.Match.span

CodePointRanges = tuple[list[int], list[int]]
_START = itemgetter(0)
_END = itemgetter(1)


def merge_ranges(pairs: Sequence[tuple[int, int]] | Sequence[tuple[int, int, str]]) -> CodePointRanges:
    """Union of intervals given sorted by start; touching intervals merge ([0, 3) + [3, 5) = [0, 5))."""
    starts = list(map(_START, pairs))
    ends = list(map(_END, pairs))
    # Most span lists are already disjoint: then the union is the list itself (checked in C).
    if all(map(lt, ends[:-1], starts[1:])):
        return starts, ends
    starts = []
    ends = []
    last_end = -1
    for interval in pairs:
        start = interval[0]
        end = interval[1]
        if start <= last_end:
            if end > last_end:
                ends[-1] = last_end = end
        else:
            starts.append(start)
            ends.append(end)
            last_end = end
    return starts, ends


def total_length(intervals: CodePointRanges) -> int:
    """Number of code points in a merged interval set."""
    return sum(intervals[1]) - sum(intervals[0])


def union_length(a: Sequence[tuple], b: Sequence[tuple]) -> int:
    """Code points covered by either list of intervals (each sorted by start)."""
    return total_length(merge_ranges(sorted(chain(a, b))))


def covered_length(intervals: CodePointRanges, start: int, end: int) -> int:
    """Code points of [start, end) inside the interval set."""
    starts, ends = intervals
    covered = 0
    first = bisect_right(starts, start) - 1
    for k in range(first if first > 0 else 0, bisect_left(starts, end)):
        piece_start = starts[k] if starts[k] > start else start
        piece_end = ends[k] if ends[k] < end else end
        if piece_start < piece_end:
            covered += piece_end - piece_start
    return covered


def overlaps_any(intervals: CodePointRanges, start: int, end: int) -> bool:
    """True when [start, end) shares at least one code point with the interval set."""
    starts, ends = intervals
    last = bisect_left(starts, end) - 1  # the last interval that starts before `end`
    return last >= 0 and ends[last] > start


def covers(intervals: CodePointRanges, start: int, end: int) -> bool:
    """True when every code point of [start, end) is in the interval set."""
    starts, ends = intervals
    containing = bisect_right(starts, start) - 1
    return containing >= 0 and ends[containing] >= end


class LeftOutCounter:
    """Counts the left-out characters (LEFT_OUT_CHARACTERS) of one text in ranges."""

    __slots__ = ("_mask", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        try:
            self._mask: bytes | None = text.encode("latin-1").translate(_LATIN1_MASK)
        except UnicodeEncodeError:
            self._mask = None

    def in_text(self) -> int:
        """Left-out characters in the whole text."""
        if self._mask is not None:
            return self._mask.count(0)
        text = self._text
        return sum([text.count(c) for c in LEFT_OUT_CHARACTERS])

    def scored_length(self, intervals: CodePointRanges) -> int:
        """Scored code points (not left out) in a merged interval set."""
        starts, ends = intervals
        if self._mask is not None:
            return sum(map(self._mask.count, [1] * len(starts), starts, ends))
        findall = _SCORED_PATTERN.findall
        text = self._text
        return sum([len(findall(text, start, end)) for start, end in zip(starts, ends, strict=True)])

    def has_scored(self, intervals: CodePointRanges) -> bool:
        """True when some code point of the interval set is not left out."""
        starts, ends = intervals
        if self._mask is not None:
            find = self._mask.find
            return any(find(1, start, end) >= 0 for start, end in zip(starts, ends, strict=True))
        search = _SCORED_PATTERN.search
        text = self._text
        return any(search(text, start, end) for start, end in zip(starts, ends, strict=True))


def uncovered_part(intervals: CodePointRanges, start: int, end: int) -> CodePointRanges:
    """The part of [start, end) outside the interval set."""
    starts, ends = intervals
    first = bisect_right(starts, start) - 1
    if first < 0:
        first = 0
    stop = bisect_left(starts, end)
    part_starts: list[int] = []
    part_ends: list[int] = []
    position = start
    for k in range(first, stop):
        if starts[k] > position:
            part_starts.append(position)
            part_ends.append(starts[k])
        if ends[k] > position:
            position = ends[k]
    if position < end:
        part_starts.append(position)
        part_ends.append(end)
    return part_starts, part_ends


def span_tokens(text: str, start: int, end: int) -> tuple[tuple[int, int], ...] | list[tuple[int, int]]:
    r"""Tokens (runs of `[^\W_]+`) inside text[start:end], as (start, end) offsets into the text.

    Runs are cut at the span bounds: a span that starts inside a word yields the part it covers.
    """
    segment = text[start:end]
    if segment.isalnum():
        return ((start, end),)
    # map() over the matches keeps the loop in C.
    return list(map(_MATCH_SPAN, TOKEN_PATTERN.finditer(text, start, end)))
