"""EPPI Reviewer citation markup: the `citation_page` and `citation_highlight_text` columns.

An EPPI `ItemAttributeFullTextDetails` text looks like `Page 3:\n[¬s]"the highlighted words"[¬e]`.
(docs/semantics.md section 2, "EPPI citations".)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from metrics.engine.attributes.types import FullTextDetail

ENTRY_SEPARATOR = ": "

_PAGE = re.compile(r"Page\s+(\d+)\s*:")
_MARKER = "[¬"
_START = "[¬s]"
_END = "[¬e]"
_MARKUP = re.compile(r"\[¬[se]\]")
_QUOTES = "\"'“”‘’„«»"


class Citation(NamedTuple):
    """The citation columns of one gold annotation, and the texts `gold_value_in_citation` searches."""

    raw_details: str | None
    page: str | None
    highlight_text: str | None
    # Each highlight separately, so a searched value cannot straddle two unrelated passages.
    highlights: tuple[str, ...]


NO_CITATION = Citation(raw_details=None, page=None, highlight_text=None, highlights=())


def clean_highlight(text: str) -> str:
    """Markup removed, whitespace collapsed, surrounding quotes stripped."""
    if _MARKER in text:
        text = _MARKUP.sub(" ", text)
    return " ".join(text.split()).strip(_QUOTES).strip()


def citation_page(text: str) -> str | None:
    """The number of the first `Page N:` marker, as text; None when there is none."""
    match = _PAGE.search(text) if "Page" in text else None
    return match.group(1) if match else None


def citation_highlights(text: str) -> list[str]:
    """The highlighted passages of one detail text (docs/semantics.md), cleaned, empty ones dropped.
    A plain loop: this runs once per comparison row."""
    spans: list[str] = []
    start = text.find(_START)
    if start == -1:
        spans.append(_PAGE.sub(" ", text, count=1) if "Page" in text else text)
    while start != -1:
        close = text.find(_END, start + len(_START))
        if close == -1:
            if not spans:
                spans.append(text[start + len(_START) :])
            break
        spans.append(text[start + len(_START) : close])
        start = text.find(_START, close + len(_END))
    highlights = []
    for span in spans:
        cleaned = clean_highlight(span)
        if cleaned:
            highlights.append(cleaned)
    return highlights


def parse_citation(details: Sequence[FullTextDetail]) -> Citation:
    """The citation columns of a gold annotation's full-text details. Pages are listed once each, in
    order of first appearance (two highlights on page 3 give "3", not "3: 3")."""
    if not details:
        return NO_CITATION
    if len(details) == 1:
        # The common case, without the joining.
        text = details[0].text
        highlights = tuple(citation_highlights(text))
        return Citation(
            raw_details=text,
            page=citation_page(text),
            highlight_text=ENTRY_SEPARATOR.join(highlights) or None,
            highlights=highlights,
        )
    pages: list[str] = []
    highlights: list[str] = []
    for detail in details:
        page = citation_page(detail.text)
        if page is not None and page not in pages:
            pages.append(page)
        highlights.extend(citation_highlights(detail.text))
    return Citation(
        raw_details=ENTRY_SEPARATOR.join(detail.text for detail in details),
        page=ENTRY_SEPARATOR.join(pages) or None,
        highlight_text=ENTRY_SEPARATOR.join(highlights) or None,
        highlights=tuple(highlights),
    )
