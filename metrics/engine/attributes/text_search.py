"""Is a gold value found in a text? (SEMANTICS.md section 2, "Gold value found in text".)

Used twice per comparison row: against the context the model read (`gold_value_in_context`, the
good/bad source strata) and against the citation texts (`gold_value_in_citation`). Texts are searched
many times per document, so `SearchableText` prepares each text once and caches what the searches need.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

from metrics.engine.attributes.coercion import parse_number_text

# A number as written in running text: digits, optionally grouped or split by "." or "," (kept as one
# token so "10,000" is never read as 10 and 0), or led by the separator (".05" in "p < .05").
# `token_value` then decides whether it stands alone and whether a sign belongs to it, and reads it
# whole in the project's number format (which decides whether a leading "." or "," is a decimal).
_NUMBER_TOKEN = re.compile(r"[.,]?\d+(?:[.,]\d+)*")
# The same tokens, found from their first digit: a text is scanned for this far faster than for
# `_NUMBER_TOKEN`, whose optional first character the regex engine tries at every position. A separator right before the digits is the token's own (a token ends with a digit, so
# the one before cannot have taken it).
_DIGITS_OF_TOKEN = re.compile(r"\d+(?:[.,]\d+)*")
_GLUE = "_.,"
_THOUSANDS_SEPARATOR = {"en": ",", "de": "."}
# Past this many candidate integer parts the targeted search is no cheaper than reading every number.
_MAX_TARGETED_KEYS = 3


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
    folded = text.casefold()
    if len(folded) > _LONG_TEXT and _is_collapsed_ascii(folded):
        return folded
    return " ".join(folded.split())


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
    """Every number in `text` as signed decimals, sorted. A token the format cannot read yields nothing.

    Under `en`, "10,000" is 10000 (one token, never 10 and 0) and "0,45" is not a number; under `de`,
    "1.250,5" is 1250.5 and "0,45" is 0.45.
    """
    numbers = []
    for match in _DIGITS_OF_TOKEN.finditer(text):
        start = match.start()
        if start and text[start - 1] in ".,":
            start -= 1
        value = token_value(text, start, match.end(), number_format)
        if value is not None:
            numbers.append(value)
    numbers.sort()
    return numbers


def number_in(value: float, sorted_numbers: Sequence[float], relative_tolerance: float) -> bool:
    """True when some number equals `value` within `relative_tolerance` (math.isclose, no absolute slack)."""
    index = bisect_left(sorted_numbers, value)
    # Only the nearest number on either side can be close enough.
    for neighbour in sorted_numbers[max(index - 1, 0) : index + 1]:
        if math.isclose(neighbour, value, rel_tol=relative_tolerance, abs_tol=0.0):
            return True
    return False


def _token_start(text: str, position: int) -> int:
    """Where the `_NUMBER_TOKEN` holding the digit at `position` starts: back over digits, and over
    separators that have a digit before them."""
    while position > 0:
        previous = text[position - 1]
        if previous.isdecimal() or (previous in ".," and position > 1 and text[position - 2].isdecimal()):
            position -= 1
        else:
            break
    return position


@lru_cache(maxsize=4096)  # a pure function; one row searches its gold value in up to three texts
def _integer_part_keys(value: float, relative_tolerance: float, number_format: str) -> tuple[str, ...] | None:
    """Texts one of which any token equal to `value` must contain: its integer part, plain or grouped.

    None when the tolerance allows too many integer parts to be worth a targeted search.
    """
    magnitude = abs(value)
    # The tolerance is relative to the larger side, so allow a little more than tolerance * value.
    # int() truncates, which is floor for these non-negative numbers.
    low = int(magnitude * (1 - 2 * relative_tolerance))
    high = int(magnitude * (1 + 2 * relative_tolerance))
    if high - low >= _MAX_TARGETED_KEYS:
        return None
    keys: list[str] = []
    for integer_part in range(low, high + 1):
        keys.append(str(integer_part))
        if integer_part >= 1000:
            keys.append(f"{integer_part:,}".replace(",", _THOUSANDS_SEPARATOR[number_format]))
    return tuple(keys)


# A value below 1 is looked for by its first significant digits: four of them (fewer when the value
# has fewer) seldom occur elsewhere in a text, and still leave a tolerance of 1e-9 one or two keys.
_FRACTION_KEY_SCALE = 1_000
# The relative error of a decimal token read as a float, and of scaling the bounds: far below any
# tolerance worth a key, so the bounds are widened by it and no written form is missed.
_ROUNDING_MARGIN = 1e-12


@lru_cache(maxsize=4096)
def _fraction_keys(magnitude: float, relative_tolerance: float) -> tuple[str, ...] | None:
    """Texts one of which any token equal to a value of this magnitude (0 < magnitude < 1) must
    contain: its first significant decimal digits, trailing zeros left off ("46" for 0.046, found in
    "0.046", ".0460" and "0.04600001"). None when the tolerance allows too many of them.

    A token in (0, 1) is written 0.d1d2... (or .d1d2..., or with "," under `de`), its decimal digits
    unbroken. The digits d1..dk, as the integer floor(token * 10^k), lie between the floors of the
    bounds times 10^k; those integers without their trailing zeros are substrings of d1..dk (or of
    d1..dn when the token has n < k digits, the missing ones being zeros).
    """
    low = magnitude * (1 - 2 * relative_tolerance - _ROUNDING_MARGIN)
    high = magnitude * (1 + 2 * relative_tolerance + _ROUNDING_MARGIN)
    if low <= 0.0 or high >= 1.0:
        return None
    scale = 1
    while low * scale < _FRACTION_KEY_SCALE:
        scale *= 10
        if scale > 10**30:
            return None
    first, last = math.floor(low * scale), math.floor(high * scale)
    if last - first >= _MAX_TARGETED_KEYS:
        return None
    return tuple(dict.fromkeys(str(digits).rstrip("0") for digits in range(first, last + 1)))


def _fraction_occurs(
    text: str, value: float, keys: tuple[str, ...], number_format: str, relative_tolerance: float
) -> bool:
    """`number_occurs` of a value below 1: the token holding each occurrence of a key is read (a key
    may continue or end a decimal part, so none is skipped unread), once."""
    for key in keys:
        position = text.find(key)
        while position != -1:
            start = _token_start(text, position)
            if start and text[start - 1] in ".,":
                start -= 1  # a leading-dot decimal (".05"), as `read_numbers` reads it
            token = _NUMBER_TOKEN.match(text, start)
            end = token.end()  # type: ignore[union-attr]  (a digit at `position` always starts one)
            found = token_value(text, start, end, number_format)
            if found is not None and math.isclose(found, value, rel_tol=relative_tolerance, abs_tol=0.0):
                return True
            position = text.find(key, end)
    return False


def number_occurs(text: str, value: float, number_format: str, relative_tolerance: float) -> bool | None:
    """Targeted form of `number_in(value, read_numbers(text))`: look only where `value` could be written.

    Reading every number of a long context costs far more than finding the few places holding the
    digits of one value, and the answer is the same (a property test holds the two together).
    None when the search cannot be targeted; the caller then reads every number.
    """
    magnitude = abs(value)
    if magnitude < 1.0:
        # Zero equals only tokens of zeros: each holds a "0".
        fraction_keys = ("0",) if magnitude == 0.0 else _fraction_keys(magnitude, relative_tolerance)
        if fraction_keys is None:
            return None
        return _fraction_occurs(text, value, fraction_keys, number_format, relative_tolerance)
    keys = _integer_part_keys(value, relative_tolerance, number_format)
    if keys is None or keys[0] == "0":
        # The tolerance reaches below 1, which may be written without its integer part (".5").
        return None
    for key in keys:
        position = text.find(key)
        while position != -1:
            end = position + len(key)
            # A digit right after the key, or a non-zero digit right before it, makes this occurrence
            # part of a longer integer part or of a decimal part; the occurrence that is a whole
            # integer part (if any) is found by this same loop, so skip without reading the token.
            if (end < len(text) and text[end].isdecimal()) or (
                position > 0 and text[position - 1].isdecimal() and text[position - 1] != "0"
            ):
                position = text.find(key, position + 1)
                continue
            start = _token_start(text, position)
            token = _NUMBER_TOKEN.match(text, start)
            found = token_value(text, start, token.end(), number_format) if token else None
            if found is not None and math.isclose(found, value, rel_tol=relative_tolerance, abs_tol=0.0):
                return True
            position = text.find(key, position + 1)
    return False


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

    def contains_string(self, normalised_value: str, *, near_threshold: float | None = None) -> bool:
        """Exact on word boundaries; with `near_threshold`, a near window of words also counts."""
        if occurs_on_word_boundaries(normalised_value, self.folded):
            return True
        return near_threshold is not None and near_window_in(normalised_value, self.folded, near_threshold)

    def contains_number(self, value: float, relative_tolerance: float) -> bool:
        # Once the text's numbers are read (for an earlier value the targeted search could not
        # settle), a binary search in them beats another scan of the text; both give one answer.
        if self._numbers is None:
            found = number_occurs(self.raw, value, self._number_format, relative_tolerance)
            if found is not None:
                return found
        return number_in(value, self.numbers, relative_tolerance)
