"""goldstandard_llm_comparison.csv: exactly the seed's 20 columns, one row per document x attribute."""

from __future__ import annotations

import csv
import io

from metrics.artefacts.comparison import comparison_csv
from metrics.engine.attributes.types import AttributeType, MatchStatus
from tests.artefacts.factories import evaluation, row

SEED_COLUMNS = [
    "document_id",
    "external_id",
    "document_name",
    "attribute_id",
    "attribute_label",
    "extraction_run_id",
    "attribute_presence",
    "human_additional_text",
    "item_attribute_full_text_details",
    "citation_page",
    "citation_highlight_text",
    "human_extraction",
    "llm_extraction",
    "llm_reasoning",
    "llm_verbatim_text",
    "human_verbatim_fuzzy_match_pct",
    "llm_verbatim_fuzzy_match_pct",
    "gold_value_in_citation",
    "gold_value_in_context",
    "match_status",
]


def written(*rows) -> list[dict[str, str]]:
    text = "".join(comparison_csv(evaluation([], list(rows)).rows))
    reader = csv.DictReader(io.StringIO(text, newline=""))
    assert reader.fieldnames == SEED_COLUMNS
    return list(reader)


def test_the_header_is_exactly_the_20_seed_columns_in_order():
    text = "".join(comparison_csv(evaluation([]).rows))

    assert text == ",".join(SEED_COLUMNS) + "\r\n"


def test_rows_keep_the_engine_order_and_spell_values_the_seed_way():
    first, second, third = written(
        row(
            citation_page="2",
            citation_highlight_text="conducted in Kenya",
            item_attribute_full_text_details='Page 2:\n[¬s]"conducted in Kenya"[¬e]',
            human_verbatim_fuzzy_match_pct=87.5,
            llm_verbatim_fuzzy_match_pct=66.666666,
        ),
        row(
            document_id="d2",
            attribute_id="a2",
            attribute_label="Randomised",
            attribute_type=AttributeType.BOOL,
            attribute_presence=False,
            human_additional_text=None,
            human_extraction=False,
            llm_extraction=None,
            llm_reasoning="no prediction was posted for this document",
            gold_value_in_citation=None,
            gold_value_in_context=None,
            match_status=None,
        ),
        row(
            document_id="d3",
            attribute_type=AttributeType.FLOAT,
            human_extraction=-3.5,
            llm_extraction=-3.25,
            gold_value_in_context=False,
            match_status=MatchStatus.EXTRACTION_ERROR_BAD_SOURCE,
        ),
    )

    assert [r["document_id"] for r in (first, second, third)] == ["d1", "d2", "d3"]
    assert first["item_attribute_full_text_details"] == 'Page 2:\n[¬s]"conducted in Kenya"[¬e]'
    assert (first["citation_page"], first["citation_highlight_text"]) == ("2", "conducted in Kenya")
    assert (first["human_verbatim_fuzzy_match_pct"], first["llm_verbatim_fuzzy_match_pct"]) == (
        "87.50",
        "66.67",
    )
    assert (first["attribute_presence"], first["gold_value_in_citation"], first["match_status"]) == (
        "True",
        "True",
        "exact_match",
    )
    assert (second["attribute_presence"], second["human_extraction"], second["llm_extraction"]) == (
        "False",
        "False",
        "",
    )
    assert (second["gold_value_in_context"], second["match_status"], second["human_additional_text"]) == (
        "",
        "",
        "",
    )
    # Our own coerced numbers are data: a negative value is written as a number, unescaped.
    assert (third["human_extraction"], third["llm_extraction"]) == ("-3.5", "-3.25")
    assert third["gold_value_in_context"] == "False"


def test_text_from_gold_and_model_is_escaped_against_formula_injection():
    (escaped,) = written(
        row(
            document_name="=cmd|'/C calc'!A0",
            human_additional_text="+44 20 7946 0000",
            human_extraction="-5 mg",
            llm_extraction="@SUM(1)",
            llm_reasoning='=HYPERLINK("http://example.com")',
            llm_verbatim_text="\tpadded",
            citation_highlight_text="\rreturn",
        )
    )

    assert escaped["document_name"] == "'=cmd|'/C calc'!A0"
    assert escaped["human_additional_text"] == "'+44 20 7946 0000"
    assert escaped["human_extraction"] == "'-5 mg"
    assert escaped["llm_extraction"] == "'@SUM(1)"
    assert escaped["llm_reasoning"] == '\'=HYPERLINK("http://example.com")'
    assert escaped["llm_verbatim_text"] == "'\tpadded"
    assert escaped["citation_highlight_text"] == "'\rreturn"


def test_list_and_dict_values_are_written_as_json():
    (structured,) = written(
        row(attribute_type=AttributeType.LIST, human_extraction=["a", "b"], llm_extraction={"arm": 1})
    )

    assert (structured["human_extraction"], structured["llm_extraction"]) == ('["a", "b"]', '{"arm": 1}')
