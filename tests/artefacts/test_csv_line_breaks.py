"""A cell holding a CR or LF stays one cell, and no line of any CSV we write opens with a formula.

A spreadsheet starts a new physical line at every CR or LF, quoted or not, and reads what follows as
the start of a cell: `"\\r=1+1#5"` as a document id put `=1+1#5` at the start of a line.
"""

from __future__ import annotations

import csv
import io
import re
from types import SimpleNamespace

import pytest

from experiments.models import RunKind
from metrics.artefacts.cells import FORMULA_TRIGGERS, escape_formula
from metrics.artefacts.comparison import comparison_csv
from metrics.artefacts.exports import comparison_csv_stream
from metrics.artefacts.metrics_files import write_metrics_csv
from metrics.artefacts.run_records import write_prompts_used_csv
from metrics.engine.attributes.types import AttributeType
from metrics.services.span_scoring import ROW_COLUMNS
from tests.artefacts.factories import evaluation, result, row, spec

HOSTILE = [
    "\r=1+1#5",
    "d\r=1+1",
    "d\n+1",
    "d\r\n-1",
    "d\r\r@x",
    "d\n\t=1",
    "d\n\r=1",
    "\r\n=2",
    'Page 3:\n[¬s]"=cmd"[¬e]\n=HYPERLINK("x")',
]


def physical_lines(text: str) -> list[str]:
    """The lines a spreadsheet sees: split at every CR, LF and CRLF, inside quotes or not."""
    return re.split(r"\r\n|\r|\n", text)


def assert_safe(text: str, expected_rows: list[list[str]]) -> None:
    assert list(csv.reader(io.StringIO(text, newline=""))) == expected_rows
    for line in physical_lines(text):
        assert not line or line[0] not in FORMULA_TRIGGERS, repr(line)


@pytest.mark.parametrize("value", HOSTILE)
def test_escape_formula_quotes_every_line_that_opens_with_a_trigger(value):
    for line in physical_lines(escape_formula(value)):
        assert not line or line[0] not in FORMULA_TRIGGERS


def test_text_with_line_breaks_and_no_trigger_after_them_is_left_alone():
    assert escape_formula("line one\r\nline two\nthree") == "line one\r\nline two\nthree"


@pytest.mark.parametrize("value", HOSTILE)
def test_the_comparison_file_keeps_a_hostile_id_in_its_cell(value):
    text = "".join(comparison_csv([row(document_id=value, external_id=value, llm_reasoning=value)]))
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == 2
    assert rows[1][0] == rows[1][1] == rows[1][13] == escape_formula(value)
    assert_safe(text, rows)


@pytest.mark.parametrize("value", HOSTILE)
def test_the_comparison_file_escapes_lines_inside_citation_details(value):
    text = "".join(comparison_csv([row(item_attribute_full_text_details=value)]))
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[1][8] == escape_formula(value)
    assert_safe(text, rows)


@pytest.mark.parametrize("value", HOSTILE)
def test_the_csv_stream_of_attribute_rows_is_safe(value):
    stored = SimpleNamespace(
        columns={
            "document_id": value,
            "external_id": value,
            "attribute_id": "a1",
            "attribute_label": value,
            "human_verbatim_fuzzy_match_pct": 0.0,
            "llm_verbatim_fuzzy_match_pct": 0.0,
        },
        attribute=SimpleNamespace(type=AttributeType.STRING.value),
    )
    text = "".join(comparison_csv_stream(RunKind.ATTRIBUTES, [stored]))
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == 2
    assert rows[1][0] == rows[1][4] == escape_formula(value)
    assert_safe(text, rows)


@pytest.mark.parametrize("value", HOSTILE)
def test_the_span_comparison_stream_is_safe(value):
    stored = SimpleNamespace(columns={"document_id": value, "side": "gold", "start": 0, "end": 3})
    text = "".join(comparison_csv_stream(RunKind.SPANS, [stored]))
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == list(ROW_COLUMNS)
    assert rows[1][0] == escape_formula(value)
    assert_safe(text, rows)


@pytest.mark.parametrize("value", HOSTILE)
def test_the_metrics_and_prompts_files_are_safe(value):
    attribute = spec(value, value, AttributeType.STRING)
    metrics = io.StringIO(newline="")
    write_metrics_csv(evaluation([result(attribute, {})], run_id=value), metrics)
    rows = list(csv.reader(io.StringIO(metrics.getvalue(), newline="")))
    assert rows[1][:3] == [escape_formula(value)] * 3
    assert_safe(metrics.getvalue(), rows)

    prompts = io.StringIO(newline="")
    write_prompts_used_csv([attribute], prompts)
    rows = list(csv.reader(io.StringIO(prompts.getvalue(), newline="")))
    assert rows[1][2:] == [escape_formula(value)] * 2
    assert_safe(prompts.getvalue(), rows)
