"""Verbatim grounding: how well a supporting snippet is found in the context the model read.

The score behind `human_verbatim_fuzzy_match_pct` and `llm_verbatim_fuzzy_match_pct`
(SEMANTICS.md section 2, "Verbatim grounding").
"""

from __future__ import annotations

from rapidfuzz import fuzz

from metrics.engine.attributes.text_search import collapse_whitespace

# Below this length a fuzzy partial ratio is meaningless: "12" is "found" in any text with a 1 and a 2.
SHORT_SNIPPET_LENGTH = 4
_DIGITS = frozenset("0123456789")


def _is_digit(text: str, index: int) -> bool:
    return 0 <= index < len(text) and text[index] in _DIGITS


def _number_edge(text: str, index: int, step: int) -> bool:
    """True when the character at `index` continues a number: a digit, or a separator before a digit."""
    if not 0 <= index < len(text):
        return False
    char = text[index]
    return char in _DIGITS or (char in ".," and _is_digit(text, index + step))


def occurs_on_number_boundaries(digits: str, text: str) -> bool:
    """True when `digits` occurs in `text` as a whole number: "12" is in "n=12." but not in "120" or "1.12"."""
    position = text.find(digits)
    while position != -1:
        end = position + len(digits)
        if not _number_edge(text, position - 1, -1) and not _number_edge(text, end, 1):
            return True
        position = text.find(digits, position + 1)
    return False


def verbatim_fuzzy_pct(snippet: str | None, collapsed_context: str) -> float:
    """Grounding score 0-100 (two decimals) of `snippet` in `collapsed_context`.

    Formula: both sides whitespace-collapsed, case kept (the context must be passed collapsed).
    - an empty side scores 0;
    - a snippet shorter than 4 characters made of digits scores 100 when it occurs on number
      boundaries, else 0;
    - any other snippet that occurs as a substring scores 100 (what partial_ratio gives, only faster);
    - everything else scores `rapidfuzz.fuzz.partial_ratio(snippet, context)`.
    Never null: no snippet means no grounding, 0.
    """
    if not snippet or not collapsed_context:
        return 0.0
    collapsed_snippet = collapse_whitespace(snippet)
    if not collapsed_snippet:
        return 0.0
    if len(collapsed_snippet) < SHORT_SNIPPET_LENGTH and _DIGITS.issuperset(collapsed_snippet):
        return 100.0 if occurs_on_number_boundaries(collapsed_snippet, collapsed_context) else 0.0
    if collapsed_snippet in collapsed_context:
        return 100.0
    return round(fuzz.partial_ratio(collapsed_snippet, collapsed_context), 2)
