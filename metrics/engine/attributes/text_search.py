"""Is a gold value found in a text? (docs/semantics.md section 2, "Was the gold value in the text?")

Used twice per comparison row: against the context the model read (`gold_value_in_context`, the
good/bad source strata) and against the citation texts (`gold_value_in_citation`). Texts are searched
many times per document, so `SearchableText` prepares each text once and caches what the searches need.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence

from rapidfuzz.distance import Levenshtein

from metrics.engine.attributes.coercion import parse_number_text

# A number as written in running text: digits, optionally grouped or split by "." or "," (kept as one
# token so "10,000" is never read as 10 and 0), found from its first digit; a separator right before
# the digits is the token's own (".05" in "p < .05"; a token ends with a digit, so the one before
# cannot have taken it). `token_value` then decides whether it stands alone and whether a sign
# belongs to it, and reads it whole in the project's number format (which decides whether a leading
# "." or "," is a decimal).
_DIGITS_OF_TOKEN = re.compile(r"\d+(?:[.,]\d+)*")
_GLUE = "_.,"


# The characters str.split() splits ASCII text on, besides the space.
_ASCII_WHITESPACE_BUT_SPACE = "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def _is_collapsed_ascii(text: str) -> bool:
    """True for ASCII text that collapsing would leave unchanged: single spaces only, none at either end.

    A handful of C-speed scans instead of splitting a long context into hundreds of words and
    joining them again (a property test holds this to `" ".join(text.split())`).
    """
    if not text.isascii() or "  " in text or text[:1] == " " or text[-1:] == " ":
        return False
    return not any(map(text.__contains__, _ASCII_WHITESPACE_BUT_SPACE))


# Below this length splitting and joining is as cheap as the scans of `_is_collapsed_ascii`.
_LONG_TEXT = 100


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace become one space; leading and trailing whitespace goes."""
    if len(text) > _LONG_TEXT and _is_collapsed_ascii(text):
        return text
    return " ".join(text.split())


def normalise_for_search(text: str) -> str:
    """Whitespace-collapsed and casefolded: the form both sides take before a STRING search."""
    return collapse_whitespace(text.casefold())


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def occurs_on_word_boundaries(needle: str, haystack: str) -> bool:
    """True when `needle` occurs in `haystack` with no word character glued to either end.

    "male" is not found in "female" nor in "males". Boundaries only constrain ends of the needle that
    are word characters themselves ("(a)" may follow a letter). An empty needle is never found.
    """
    if not needle:
        return False
    check_start = _is_word_char(needle[0])
    check_end = _is_word_char(needle[-1])
    position = haystack.find(needle)
    while position != -1:
        end = position + len(needle)
        starts_clean = not check_start or position == 0 or not _is_word_char(haystack[position - 1])
        ends_clean = not check_end or end == len(haystack) or not _is_word_char(haystack[end])
        if starts_clean and ends_clean:
            return True
        position = haystack.find(needle, position + 1)
    return False


def _glues(char: str) -> bool:
    """A character that, next to a number, makes it part of a larger token: a word character or separator."""
    return char.isalnum() or char in _GLUE


def token_value(text: str, start: int, end: int, number_format: str) -> float | None:
    """The value of the number token `text[start:end]`, or None when it is not a number on its own.

    A token glued to a word or separator on its left ("x12", "1..2") is not a number. A sign counts
    only when it starts a word: "-5" in "was -5" is -5, in "10-5" it is 5.
    """
    previous = text[start - 1] if start else ""
    if previous and _glues(previous):
        return None
    token = text[start:end]
    value = float(token) if token.isdecimal() else parse_number_text(token, number_format)
    if value is None:
        return None
    if previous in ("+", "-") and (start == 1 or not (_glues(text[start - 2]) or text[start - 2] in "+-")):
        return -float(value) if previous == "-" else float(value)
    return float(value)


def read_numbers(text: str, number_format: str) -> list[float]:
    """Every number in `text` as signed decimals, sorted (docs/semantics.md: "10,000" is one token under
    `en`, never 10 and 0). A token the format cannot read yields nothing."""
    numbers = []
    for start, end in _digit_tokens(text):
        if start and text[start - 1] in ".,":
            start -= 1
        value = token_value(text, start, end, number_format)
        if value is not None:
            numbers.append(value)
    numbers.sort()
    return numbers


# Every byte as b"0" when it is an ASCII digit, b" " otherwise: in the translated bytes of an ASCII
# text, `find(b"0")` is the next digit. The regex engine walks a text at about 20 ns a character
# (0.2 ms for an 8 KB context holding 15 numbers); the translation and the finds run at C speed.
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))


def _digit_tokens(text: str) -> Iterable[tuple[int, int]]:
    """(start, end) of each `_DIGITS_OF_TOKEN` match, in order, as `finditer` finds them.

    In ASCII text (where the regex's digits are 0-9) a match can only start at a digit, and
    `finditer` takes the first digit at or past the previous match's end (which is never a digit: a
    match ends with its last digit), so the match is tried there.
    """
    if not text.isascii():
        return (match.span() for match in _DIGITS_OF_TOKEN.finditer(text))
    find = text.encode("ascii").translate(_DIGITS_AS_ZEROS).find
    match = _DIGITS_OF_TOKEN.match
    spans = []
    start = find(b"0")
    while start != -1:
        end = match(text, start).end()  # type: ignore[union-attr]
        spans.append((start, end))
        start = find(b"0", end)
    return spans


def number_in(value: float, sorted_numbers: Sequence[float], relative_tolerance: float) -> bool:
    """True when some number equals `value` within `relative_tolerance` (math.isclose, no absolute slack)."""
    index = bisect_left(sorted_numbers, value)
    # Only the nearest number on either side can be close enough (tested without a slice's copy).
    if index < len(sorted_numbers) and math.isclose(
        sorted_numbers[index], value, rel_tol=relative_tolerance, abs_tol=0.0
    ):
        return True
    return index > 0 and math.isclose(
        sorted_numbers[index - 1], value, rel_tol=relative_tolerance, abs_tol=0.0
    )


def near_window_in(needle: str, haystack: str, threshold: float) -> bool:
    """True when some window of as many words as `needle` reaches the Levenshtein similarity threshold.

    Both sides are expected normalised (`normalise_for_search`, single spaces). Similarity is
    `Levenshtein.normalized_similarity`, as for `edit_distance_match_rate`.

    Only windows that can reach the threshold are compared. normalized_similarity >= t means
    distance <= (1 - t) * max(len(needle), len(window)), and the lengths differ by at most the
    distance, so distance <= d = (1 - t) * len(needle) / t. Cut the needle into d + 1 pieces: d edits
    leave one piece untouched, so a matching window contains an exact occurrence of some piece. The
    answer is the same as comparing every window (a property test holds the two together).
    """
    width = len(needle.split())
    if width == 0:
        return False
    # The small margin keeps float rounding (0.9999... for 1) from under-counting the distance allowed.
    max_distance = int((1.0 - threshold) * len(needle) / threshold + 1e-9) if threshold > 0.0 else len(needle)
    pieces = max_distance + 1
    if pieces > len(needle):
        haystack_words = haystack.split()
        candidates: Iterable[int] = range(len(haystack_words) - width + 1)
    else:
        occurrences = _piece_occurrences(needle, pieces, haystack)
        if not occurrences:
            # The common case, settled without splitting the haystack into words.
            return False
        haystack_words = haystack.split()
        candidates = _windows_holding(occurrences, haystack_words, width)
    # Compared without rapidfuzz's score_cutoff, whose rounding can drop a window sitting exactly on
    # the threshold; this is the comparison `edit_distance_match_rate` makes.
    return any(
        Levenshtein.normalized_similarity(needle, " ".join(haystack_words[start : start + width]))
        >= threshold
        for start in candidates
    )


def _piece_occurrences(needle: str, pieces: int, haystack: str) -> list[tuple[int, int]]:
    """(start, end) in `haystack` of every occurrence of each of `pieces` near-equal cuts of `needle`."""
    size, extra = divmod(len(needle), pieces)
    occurrences = []
    begin = 0
    for index in range(pieces):
        end = begin + size + (1 if index < extra else 0)
        piece = needle[begin:end]
        begin = end
        position = haystack.find(piece)
        while position != -1:
            occurrences.append((position, position + len(piece)))
            position = haystack.find(piece, position + 1)
    return occurrences


def _windows_holding(occurrences: list[tuple[int, int]], haystack_words: list[str], width: int) -> list[int]:
    """Sorted start indices of the `width`-word windows that contain one of the occurrences."""
    word_starts = []
    offset = 0
    for word in haystack_words:
        word_starts.append(offset)
        offset += len(word) + 1
    last_start = len(haystack_words) - width
    candidates: set[int] = set()
    for start, end in occurrences:
        first_word = bisect_right(word_starts, start) - 1
        last_word = bisect_right(word_starts, end - 1) - 1
        candidates.update(range(max(last_word - width + 1, 0), min(first_word, last_start) + 1))
    return sorted(candidates)


class SearchableText:
    """One text prepared for repeated searches; each form is computed on first use and kept."""

    __slots__ = ("raw", "_collapsed", "_folded", "_numbers", "_number_format")

    def __init__(self, raw: str, number_format: str) -> None:
        self.raw = raw
        self._number_format = number_format
        self._collapsed: str | None = None
        self._folded: str | None = None
        self._numbers: list[float] | None = None

    @property
    def collapsed(self) -> str:
        """Whitespace-collapsed, case kept: what verbatim snippets are held against."""
        if self._collapsed is None:
            self._collapsed = collapse_whitespace(self.raw)
        return self._collapsed

    @property
    def folded(self) -> str:
        if self._folded is None:
            self._folded = self.collapsed.casefold()
        return self._folded

    @property
    def numbers(self) -> list[float]:
        if self._numbers is None:
            self._numbers = read_numbers(self.raw, self._number_format)
        return self._numbers

    def contains_string(self, normalised_value: str) -> bool:
        """Exact, on word boundaries (a near window counts in citations only: `near_window_in`)."""
        return occurs_on_word_boundaries(normalised_value, self.folded)

    def contains_number(self, value: float, relative_tolerance: float) -> bool:
        # Every number of the text is read once (`read_numbers`), and each value is a binary search.
        return number_in(value, self.numbers, relative_tolerance)
