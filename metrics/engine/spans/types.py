"""Plain data that goes into the span engine (docs/semantics.md section 1).

Importers (annotations/importers) build these; the engine scores them. Offsets are Unicode code
points into the document text (Python string indices), `end` exclusive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """One annotated or predicted span: code points `start` (inclusive) to `end` (exclusive).

    Bounds are checked by the scorer (`score_span_columns`) against the text they belong to
    (0 <= start < end <= len(text)), not here: a span alone does not know its text, and a check per construction would tax
    the importers, which build millions of these.
    """

    start: int
    end: int
    entity_type: str


@dataclass(frozen=True, slots=True)
class DocumentSpans:
    """One document's text with its gold spans and the predicted spans to score against them."""

    document_id: str
    text: str
    gold: Sequence[Span]
    predicted: Sequence[Span]
