"""`goldstandard_llm_comparison.csv`: one row per ComparisonRow, cells as `cells.py` makes them.

The largest artefact, so rows are built by one flat function with no per-cell call in the common
cases, and a row with nothing to quote is its cells joined by commas, exactly what the csv module
writes for it (whose per-row work was two thirds of this writer's time); any other row goes through
`csv.writer`.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator

from metrics.artefacts.cells import (
    FORMULA_TRIGGERS,
    cell,
    csv_writer,
    escape_line_starts,
)
from metrics.engine.attributes.types import (
    COMPARISON_COLUMNS,
    ComparisonRow,
    MatchStatus,
)

_BOOL = {None: "", True: "True", False: "False"}
_STATUS: dict[MatchStatus | None, str] = {None: "", **{status: status.value for status in MatchStatus}}
# A cell holding a double quote, a carriage return or a line feed is quoted by the csv module
# (QUOTE_MINIMAL, "," delimiter, CRLF); the rows test for them with three `in` (memchr scans: a
# character-class search walks the line in the regex engine, six times slower).
_SEPARATORS_IN_A_ROW = len(COMPARISON_COLUMNS) - 1
_LINES_PER_WRITE = 2_000
_DETAILS = COMPARISON_COLUMNS.index("item_attribute_full_text_details")


def _percentage(value: float | None) -> str:
    """Two decimals; blank when there was no context to score against."""
    return "" if value is None else f"{value:.2f}"


def _value_cell(value: object) -> str | int | float:
    """`cells.cell` of a value that is not a text, with the common classes first."""
    kind = value.__class__
    if kind is bool:
        return "True" if value else "False"
    if kind is int:
        return value  # type: ignore[return-value]
    return cell(value)


def _text_cells(row: ComparisonRow, percentages: dict[float, str]) -> list[str]:
    """The 20 cells of one row as the text the csv module writes for them (numbers turned into text
    as csv.writer does: `str`), the start of each text escaped, not the lines within it."""
    t = FORMULA_TRIGGERS
    document_id, external_id, name = row.document_id, row.external_id, row.document_name
    attribute_id, label, run_id = row.attribute_id, row.attribute_label, row.extraction_run_id
    human_text, details = row.human_additional_text, row.item_attribute_full_text_details
    page, highlight = row.citation_page, row.citation_highlight_text
    reasoning, llm_text = row.llm_reasoning, row.llm_verbatim_text
    human, llm = row.human_extraction, row.llm_extraction
    human_cell = (
        (("'" + human if human[0] in t else human) if human else "")
        if human.__class__ is str
        else str(_value_cell(human))
    )
    llm_cell = (
        (("'" + llm if llm[0] in t else llm) if llm else "")
        if llm.__class__ is str
        else str(_value_cell(llm))
    )
    # Percentages repeat (0, 100, the same partial ratios): each distinct one is formatted once.
    # (Zero is not kept: 0.0 and -0.0 are one key but two texts.)
    human_pct, llm_pct = row.human_verbatim_fuzzy_match_pct, row.llm_verbatim_fuzzy_match_pct
    human_pct_cell = percentages.get(human_pct)
    if human_pct_cell is None:
        human_pct_cell = _percentage(human_pct)
        if human_pct is not None and human_pct > 0:
            percentages[human_pct] = human_pct_cell
    llm_pct_cell = percentages.get(llm_pct)
    if llm_pct_cell is None:
        llm_pct_cell = _percentage(llm_pct)
        if llm_pct is not None and llm_pct > 0:
            percentages[llm_pct] = llm_pct_cell
    return [
        ("'" + document_id if document_id[0] in t else document_id) if document_id else "",
        ("'" + external_id if external_id[0] in t else external_id) if external_id else "",
        ("'" + name if name[0] in t else name) if name else "",
        ("'" + attribute_id if attribute_id[0] in t else attribute_id) if attribute_id else "",
        ("'" + label if label[0] in t else label) if label else "",
        ("'" + run_id if run_id[0] in t else run_id) if run_id else "",
        _BOOL[row.attribute_presence],
        ("'" + human_text if human_text[0] in t else human_text) if human_text else "",
        ("'" + details if details[0] in t else details) if details else "",
        ("'" + page if page[0] in t else page) if page else "",
        ("'" + highlight if highlight[0] in t else highlight) if highlight else "",
        human_cell,
        llm_cell,
        ("'" + reasoning if reasoning[0] in t else reasoning) if reasoning else "",
        ("'" + llm_text if llm_text[0] in t else llm_text) if llm_text else "",
        human_pct_cell,
        llm_pct_cell,
        _BOOL[row.gold_value_in_citation],
        _BOOL[row.gold_value_in_context],
        _STATUS[row.match_status],
    ]


def _details_cell(details: str) -> str:
    """The citation details cell as the csv module writes it (the text's start escaped already)."""
    details = escape_line_starts(details)
    if '"' in details or "," in details or "\n" in details or "\r" in details:
        return '"' + details.replace('"', '""') + '"'
    return details


def comparison_csv(rows: Iterable[ComparisonRow], *, header: bool = True) -> Iterator[str]:
    """goldstandard_llm_comparison.csv (or, without its header, a part of it) in blocks of
    _LINES_PER_WRITE rows: the offline writers and the server's download stream it alike."""
    if header:
        yield ",".join(COMPARISON_COLUMNS) + "\r\n"  # no name needs quoting
    # Rows with something to quote go through the csv module, into this buffer, in order.
    quoted = io.StringIO()
    quoting_writer = csv_writer(quoted)
    percentages: dict[float, str] = {}
    separators = _SEPARATORS_IN_A_ROW
    # A citation backs the rows of several attributes: its cell is escaped and quoted once.
    details_cells: dict[str, str] = {}
    lines: list[str] = []
    for row in rows:
        cells = _text_cells(row, percentages)
        # EPPI citation details hold a line break and quotes ('Page 3:\n[¬s]"..."[¬e]'): that
        # cell is quoted on its own, and the rest of the row checked without it.
        details = cells[_DETAILS]
        cells[_DETAILS] = ""
        line = ",".join(cells)
        if line.count(",") == separators and '"' not in line and "\n" not in line and "\r" not in line:
            if details:
                details_cell = details_cells.get(details)
                if details_cell is None:
                    details_cell = details_cells[details] = _details_cell(details)
                cells[_DETAILS] = details_cell
                line = ",".join(cells)
            lines.append(line + "\r\n")
        else:
            # Only here can a cell hold a line break: the lines inside it are escaped too.
            cells[_DETAILS] = details
            quoting_writer.writerow([escape_line_starts(text) for text in cells])
            lines.append(quoted.getvalue())
            quoted.seek(0)
            quoted.truncate()
        if len(lines) >= _LINES_PER_WRITE:
            yield "".join(lines)
            lines.clear()
    yield "".join(lines)
