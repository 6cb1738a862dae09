"""A document's text as HTML with its spans or values marked; every piece of text is escaped.

Spans: the text is cut at every span boundary, and each piece carries what covers it. Gold pieces are
`data-span="gold"`; inside them a piece some prediction covered is `data-span="predicted"` and one no
prediction covered is `data-span="missed"` (the characters that leak); a prediction outside any gold
span is `data-span="predicted"` alone (a false alarm). Each span's type is written where it ends, and a
piece whose predicted type differs from its gold type is marked `data-type-mismatch`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from web.selectors import SpanRow


@dataclass(frozen=True)
class Piece:
    start: int
    end: int
    gold_types: tuple[str, ...]
    predicted_types: tuple[str, ...]


def span_pieces(length: int, gold: Sequence[SpanRow], predicted: Sequence[SpanRow]) -> list[Piece]:
    """The text [0, length) cut at every boundary of `gold` and `predicted` (clamped to the text)."""
    cuts = {0, length}
    for span in (*gold, *predicted):
        cuts.update((min(max(span.start, 0), length), min(max(span.end, 0), length)))
    bounds = sorted(cuts)
    pieces = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        if start == end:
            continue
        pieces.append(
            Piece(
                start,
                end,
                tuple(sorted({s.entity_type for s in gold if s.start <= start and s.end >= end})),
                tuple(sorted({s.entity_type for s in predicted if s.start <= start and s.end >= end})),
            )
        )
    return pieces


def _tags(spans: Iterable[SpanRow], end: int, side: str) -> str:
    names = {"gold": "gold", "predicted": "pred"}
    return "".join(
        f'<sup class="tag tag-{side}" data-tag="{side}">{names[side]}: {escape(span.entity_type)}</sup>'
        for span in spans
        if span.end == end
    )


def spans_html(text: str, gold: Sequence[SpanRow], predicted: Sequence[SpanRow]) -> SafeString:
    parts = []
    for piece in span_pieces(len(text), gold, predicted):
        content = escape(text[piece.start : piece.end])
        gold_types = ", ".join(piece.gold_types)
        predicted_types = ", ".join(piece.predicted_types)
        mismatch = bool(piece.gold_types and piece.predicted_types) and not (
            set(piece.gold_types) & set(piece.predicted_types)
        )
        if piece.gold_types and piece.predicted_types:
            title = f"gold {gold_types}; predicted {predicted_types}" + (" (wrong type)" if mismatch else "")
            inner = (
                f'<span class="predicted{" mismatch" if mismatch else ""}" data-span="predicted" '
                f'data-type="{escape(predicted_types)}"{" data-type-mismatch" if mismatch else ""}>{content}</span>'
            )
            parts.append(
                f'<span class="gold" data-span="gold" data-type="{escape(gold_types)}" title="{escape(title)}">'
                f"{inner}</span>"
            )
        elif piece.gold_types:
            title = f"gold {gold_types}; missed: no prediction covers these characters"
            parts.append(
                f'<span class="gold" data-span="gold" data-type="{escape(gold_types)}" title="{escape(title)}">'
                f'<span class="missed" data-span="missed">{content}</span></span>'
            )
        elif piece.predicted_types:
            title = f"predicted {predicted_types}; no gold here (false alarm)"
            parts.append(
                f'<span class="predicted spurious" data-span="predicted" data-type="{escape(predicted_types)}" '
                f'title="{escape(title)}">{content}</span>'
            )
        else:
            parts.append(content)
        parts.append(_tags(gold, piece.end, "gold"))
        parts.append(_tags(predicted, piece.end, "predicted"))
    return mark_safe("".join(parts))  # noqa: S308 (text and types are escaped above)


def value_patterns(value: object) -> list[str]:
    """How a gold value may be written in a text: as is, and numbers with thousands separators."""
    if value is None or isinstance(value, (bool, list, dict)) or value == "":
        return []
    written = [str(value)]
    if isinstance(value, int):
        written.append(f"{value:,}")
    elif isinstance(value, float) and value.is_integer():
        written.extend([str(int(value)), f"{int(value):,}"])
    return list(dict.fromkeys(written))


def value_marks_html(text: str, marks: Sequence[tuple[str, str, object]]) -> tuple[SafeString, set[str]]:
    """`text` with each gold value marked where it first occurs on word boundaries (any case).

    `marks` are (attribute_id, label, gold value). Returns the HTML and the attribute ids found.
    """
    taken: list[tuple[int, int, str, str]] = []
    for attribute_id, label, value in marks:
        for written in value_patterns(value):
            words = [re.escape(word) for word in written.split()]
            if not words:
                continue
            pattern = re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)
            match = next(
                (
                    found
                    for found in pattern.finditer(text)
                    if all(found.end() <= start or found.start() >= end for start, end, _, _ in taken)
                ),
                None,
            )
            if match:
                taken.append((match.start(), match.end(), attribute_id, label))
                break
    taken.sort()
    parts, position = [], 0
    for start, end, attribute_id, label in taken:
        parts.append(escape(text[position:start]))
        parts.append(
            f'<mark class="gold-value" data-gold="{escape(attribute_id)}" title="gold {escape(label)}">'
            f'{escape(text[start:end])}<sup class="tag tag-gold">{escape(label)}</sup></mark>'
        )
        position = end
    parts.append(escape(text[position:]))
    return mark_safe("".join(parts)), {attribute_id for _, _, attribute_id, _ in taken}  # noqa: S308
