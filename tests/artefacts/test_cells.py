"""Cells that a spreadsheet would run as formulas are escaped; numbers we write stay numbers."""

from __future__ import annotations

import pytest

from metrics.artefacts.cells import cell, escape_formula


@pytest.mark.parametrize(
    "text",
    ["=SUM(A1:A9)", "+1 555 0100", "-2 mg", "@user", "\tindented", "\rreturn", '=HYPERLINK("http://x")'],
)
def test_text_that_begins_like_a_formula_gets_a_leading_quote(text):
    assert escape_formula(text) == "'" + text
    assert cell(text) == "'" + text


@pytest.mark.parametrize("text", ["", "Kenya", "1 = 1", "a-b", " -leading space", "'quoted"])
def test_other_text_is_left_alone(text):
    assert escape_formula(text) == text


def test_numbers_we_write_are_data_and_never_escaped():
    # A spreadsheet reads -3.5 as a number; a quote would turn it into text and break sums.
    assert cell(-3.5) == -3.5
    assert cell(-12) == -12
    assert cell(0.0) == 0.0


def test_null_booleans_and_structures_have_one_spelling():
    assert cell(None) == ""
    assert cell(float("nan")) == ""
    assert (cell(True), cell(False)) == ("True", "False")
    assert cell(["b", "a"]) == '["b", "a"]'
    assert cell({"z": 1, "a": "é"}) == '{"a": "é", "z": 1}'


def test_json_text_of_a_structure_is_escaped_like_any_text():
    assert cell("-[1]") == "'-[1]"
