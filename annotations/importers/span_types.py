"""What the span importers produce: documents with their spans, in code points, labels mapped.

Kept lean on purpose: an offline evaluation holds a whole gold set (100,000 documents, a million
spans) in memory, so spans are named tuples and documents slotted dataclasses, with no per-span
extras beyond the raw label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from annotations.importers.errors import ImportProblem

Role = Literal["gold", "predictions"]


class SpanAnnotation(NamedTuple):
    """One span. `start`/`end` are code point offsets, end exclusive.

    `entity_type` is canonical (after the label map), `label` the raw label as written in the file.
    `text` is kept only when it could not be checked yet: a prediction without its document text
    is checked against the gold text when the two are paired.

    A named tuple because an import builds millions of them: it is several times cheaper to create
    than a dataclass. Its first three fields are those of the span engine's `Span`.
    """

    start: int
    end: int
    entity_type: str
    label: str
    text: str | None = None


@dataclass(slots=True)
class SpanDocument:
    """One document of an input. `text` is None only for predictions that omit it.

    `source` is the file it came from (with the archive entry), `line` its JSONL line, `annotator`
    the INCEpTION user whose annotations these are (project exports only).
    """

    document_id: str
    text: str | None
    spans: list[SpanAnnotation]
    source: str
    line: int | None = None
    annotator: str | None = None

    def location(self) -> str:
        return self.source if self.line is None else f"{self.source}:{self.line}"


@dataclass
class SpanCorpus:
    """Every document of one input, in input order, and the warnings its import produced."""

    documents: list[SpanDocument]
    warnings: list[ImportProblem] = field(default_factory=list)

    def annotators(self) -> list[str]:
        """The distinct annotators, sorted; empty when the input names none (JSONL, single CAS files)."""
        return sorted({document.annotator for document in self.documents if document.annotator is not None})

    def entity_types(self) -> frozenset[str]:
        """Every canonical type that occurs in some span."""
        return frozenset(span.entity_type for document in self.documents for span in document.spans)
