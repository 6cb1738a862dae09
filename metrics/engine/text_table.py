"""Fixed-width text tables for a terminal: the gate's, the run comparison's and the metrics table."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """The lines of `rows` (the header first) in columns two spaces apart, each as wide as its widest
    cell, with a rule of dashes under the header; trailing spaces trimmed."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = [
        "  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines
