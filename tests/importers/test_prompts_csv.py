"""The prompt CSV decides which attributes exist, their types and which are scored."""

from __future__ import annotations

import pytest

from annotations.importers.errors import InputValidationError
from annotations.importers.prompts_csv import read_prompts_csv
from metrics.engine.attributes.types import AttributeType

HEADER = "prompt,output_data_type,attribute_id,attribute_label\n"


def read(text: str, **kwargs):
    return read_prompts_csv(text.encode(), name="prompts.csv", **kwargs)


def test_it_reads_every_type_in_any_case_in_file_order():
    prompts = read(
        HEADER
        + "Was it randomised?,BOOL,a1,Randomised\n"
        + "Which country?,String,a2,Country\n"
        + "How many?,integer,a3,Participants\n"
        + "Mean age?,Float,a4,Mean age\n"
        + "Outcomes?,list,a5,Outcomes\n"
        + "Arms?,DICT,a6,Arms\n"
    )

    assert [(spec.attribute_id, spec.label, spec.type) for spec in prompts.attributes] == [
        ("a1", "Randomised", AttributeType.BOOL),
        ("a2", "Country", AttributeType.STRING),
        ("a3", "Participants", AttributeType.INTEGER),
        ("a4", "Mean age", AttributeType.FLOAT),
        ("a5", "Outcomes", AttributeType.LIST),
        ("a6", "Arms", AttributeType.DICT),
    ]
    assert prompts.attributes[0].prompt == "Was it randomised?"
    assert prompts.skipped == [] and prompts.warnings == []


def test_it_reads_a_file_on_disk_with_a_bom_columns_in_any_order_and_a_multiline_prompt(tmp_path):
    path = tmp_path / "prompts.csv"
    path.write_bytes(
        "\ufeffattribute_label,attribute_id,output_data_type,prompt,notes\n"
        'Country,a2,string,"Which country?\nAnswer with its name.",ignored\n'.encode()
    )

    prompts = read_prompts_csv(path)

    assert prompts.attributes[0].prompt == "Which country?\nAnswer with its name."
    assert prompts.attributes[0].attribute_id == "a2"


def test_a_row_with_an_empty_prompt_leaves_its_attribute_out_and_says_so():
    prompts = read(HEADER + "Was it randomised?,bool,a1,Randomised\n  ,string,a2,Country\n")

    assert [spec.attribute_id for spec in prompts.scored] == ["a1"]
    assert [spec.attribute_id for spec in prompts.skipped] == ["a2"]
    # The skipped attribute stays in the schema: the engine lists it, and gold for it still counts.
    assert [spec.attribute_id for spec in prompts.attributes] == ["a1", "a2"]
    (warning,) = prompts.warnings
    assert (warning.file, warning.line, warning.field) == ("prompts.csv", 3, "prompt")
    assert "not scored" in warning.message


def test_a_bad_type_is_an_error_naming_the_file_line_and_field():
    with pytest.raises(InputValidationError) as raised:
        read(HEADER + "Q1,bool,a1,One\nQ2,text,a2,Two\nQ3,number,a3,Three\n")

    problems = raised.value.problems
    assert [(p.file, p.line, p.field) for p in problems] == [
        ("prompts.csv", 3, "output_data_type"),
        ("prompts.csv", 4, "output_data_type"),
    ]
    assert (
        "'text'" in problems[0].message and "bool, string, integer, float, list, dict" in problems[0].message
    )
    assert "prompts.csv:3" in str(raised.value)


def test_missing_columns_are_named():
    with pytest.raises(InputValidationError) as raised:
        read("prompt,attribute_id\nQ1,a1\n")

    (problem,) = raised.value.problems
    assert problem.line == 1
    assert problem.field == "output_data_type, attribute_label"
    assert "missing column(s) output_data_type, attribute_label" in problem.message


def test_empty_ids_empty_labels_and_duplicate_ids_are_errors():
    with pytest.raises(InputValidationError) as raised:
        read(HEADER + "Q1,bool,,One\nQ2,bool,a2,\nQ3,bool,a3,Three\nQ4,bool,a3,Again\n")

    assert [(p.line, p.field) for p in raised.value.problems] == [
        (2, "attribute_id"),
        (3, "attribute_label"),
        (5, "attribute_id"),
    ]
    assert "first on line 4" in raised.value.problems[2].message


def test_a_row_longer_than_the_header_is_an_error():
    with pytest.raises(InputValidationError) as raised:
        read(HEADER + "Q1,bool,a1,One,extra\n")

    assert raised.value.problems[0].line == 2


def test_a_file_that_is_not_utf8_is_an_error_naming_the_line():
    with pytest.raises(InputValidationError) as raised:
        read_prompts_csv(
            (HEADER + "Q1,bool,a1,One\nQ\xe9,bool,a2,Two\n").encode("latin-1"), name="prompts.csv"
        )

    (problem,) = raised.value.problems
    assert (problem.file, problem.line) == ("prompts.csv", 3)
    assert "UTF-8" in problem.message


def test_blank_lines_are_skipped_and_do_not_shift_line_numbers():
    with pytest.raises(InputValidationError) as raised:
        read(
            HEADER + "\n" + "Q1,bool,a1,One\n\n\n" + '"Q2\nsecond line",bool,a2,Two\n' + "Q3,text,a3,Three\n"
        )

    (problem,) = raised.value.problems
    assert (problem.line, problem.field) == (8, "output_data_type")
