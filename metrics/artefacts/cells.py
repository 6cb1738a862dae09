"""How values become CSV cells. Formula injection (docs/semantics.md section 4): a text cell that a
spreadsheet would run as a formula (it begins with `=`, `+`, `-`, `@`, a tab or a CR) gets a leading
single quote, the OWASP recommendation. Numbers we write ourselves are data and never escaped: a
quote would turn every negative value into text and break sums.

A cell can hold line breaks (a document id "\r=1+1", EPPI citation details), after each of which a
spreadsheet reads the start of a cell: `escape_formula` quotes those too, and every CSV writer ends
its rows with CRLF (`csv_writer`), which makes the csv module quote any cell holding a CR or an LF
(with a plain LF terminator it leaves a lone CR bare, and readers split the row there).
"""

from __future__ import annotations

import csv
import json
import math
import re
from typing import IO, Any

FORMULA_TRIGGERS = frozenset("=+-@\t\r")

# A line break (CRLF as one) that a formula trigger follows; the quote goes between the two.
_LINE_START_TRIGGER = re.compile(r"(\r\n|\r|\n)(?=[=+\-@\t\r])")


def escape_formula(text: str) -> str:
    """`text`, with a single quote before each place a spreadsheet would read as a formula: the start
    of the text, and the start of every line within it, when a trigger (`= + - @`, tab, CR) opens it."""
    if text and text[0] in FORMULA_TRIGGERS:
        text = "'" + text
    return escape_line_starts(text)


def escape_line_starts(text: str) -> str:
    """`escape_formula` for the lines after the first: for writers that escaped the start already."""
    if "\r" in text or "\n" in text:
        return _LINE_START_TRIGGER.sub(r"\1'", text)
    return text


def csv_writer(handle: IO[str]) -> Any:
    """The csv writer of every CSV the project writes: CRLF rows, so a cell with a CR or LF is quoted."""
    return csv.writer(handle, lineterminator="\r\n")


def is_null(value: Any) -> bool:
    """None, and NaN: a NaN from a numeric library means "not computable", which we write as null."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def cell(value: Any) -> str | int | float:
    """The CSV cell for any value we export (see the module docstring for the rules)."""
    if value is None:
        return ""
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, str):
        return escape_formula(value)
    if isinstance(value, float):
        return "" if math.isnan(value) else value
    if isinstance(value, int):
        return value
    if isinstance(value, (list, dict, tuple)):
        return escape_formula(json.dumps(value, ensure_ascii=False, sort_keys=True))
    return escape_formula(str(value))


def write_json(value: Any, handle: IO[str]) -> None:
    """A JSON artefact as people read it: indented, non-ASCII as is, ending with a line break."""
    json.dump(value, handle, indent=2, ensure_ascii=False)
    handle.write("\n")
