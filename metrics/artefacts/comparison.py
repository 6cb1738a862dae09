"""`goldstandard_llm_comparison.csv`: gold beside prediction for every gold document x attribute.

Exactly the 20 COMPARISON_COLUMNS of the seed, in its order, one row per ComparisonRow in the order
the engine made them (documents first, then attributes). Cells follow `cells.py`: booleans `True` /
`False`, null empty, text escaped against formula injection; the two verbatim percentages are written
with two decimals.

This is the largest artefact (documents x attributes rows), so rows are built by one flat function
and handed to `csv.writer.writerows` in a single call; no per-cell call beyond the two value columns,
whose type varies.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable

from metrics.artefacts.cells import FORMULA_TRIGGERS, Destination, cell, open_destination
from metrics.engine.attributes.types import COMPARISON_COLUMNS, ComparisonRow, ExtractionEvaluation

_BOOL = {None: "", True: "True", False: "False"}
_TRIGGERS = FORMULA_TRIGGERS


def comparison_cells(row: ComparisonRow) -> list:
    """The 20 cells of one row, in COMPARISON_COLUMNS order.

    Text cells are escaped inline (`cells.escape_formula`, spelled out as an expression): one call
    per cell was a quarter of this writer's time on 200,000 rows.
    """
    t = _TRIGGERS
    document_id, external_id, name = row.document_id, row.external_id, row.document_name
    attribute_id, label, run_id = row.attribute_id, row.attribute_label, row.extraction_run_id
    human_text, details = row.human_additional_text, row.item_attribute_full_text_details
    page, highlight = row.citation_page, row.citation_highlight_text
    reasoning, llm_text = row.llm_reasoning, row.llm_verbatim_text
    status = row.match_status
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
        cell(row.human_extraction),
        cell(row.llm_extraction),
        ("'" + reasoning if reasoning[0] in t else reasoning) if reasoning else "",
        ("'" + llm_text if llm_text[0] in t else llm_text) if llm_text else "",
        f"{row.human_verbatim_fuzzy_match_pct:.2f}",
        f"{row.llm_verbatim_fuzzy_match_pct:.2f}",
        _BOOL[row.gold_value_in_citation],
        _BOOL[row.gold_value_in_context],
        "" if status is None else status.value,
    ]


def write_comparison_csv(evaluation: ExtractionEvaluation, destination: Destination) -> None:
    write_comparison_rows(evaluation.rows, destination)


def write_comparison_rows(rows: Iterable[ComparisonRow], destination: Destination) -> None:
    """Write comparison rows with their header; the server streams stored rows through this."""
    with open_destination(destination) as handle:
        writer = csv.writer(handle)
        writer.writerow(COMPARISON_COLUMNS)
        writer.writerows(map(comparison_cells, rows))
