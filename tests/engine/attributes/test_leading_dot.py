"""A leading-dot decimal (`.35`, `-.5`, as papers write `p < .05`) is a number in gold, in predictions
and in text search (docs/semantics.md section 2)."""

from __future__ import annotations

import pytest

from metrics.engine.attributes.text_search import SearchableText, read_numbers
from metrics.engine.attributes.types import AttributeType, MatchStatus
from tests.engine.attributes.test_support import evaluate, gold, predicted, result_of, spec

SCHEMA = [spec("p_value", AttributeType.FLOAT), spec("effect", AttributeType.FLOAT)]
CONTEXT = "The difference was significant (p < .05); the effect was -.5 on the scale."


def test_gold_and_predicted_leading_dot_decimals_are_numbers_and_found_in_the_context():
    evaluation = evaluate(
        SCHEMA,
        [gold("d1", {"p_value": ".05", "effect": "-.5"})],
        [predicted("d1", {"p_value": ".05", "effect": "-0.5"}, context=CONTEXT)],
    )

    rows = {row.attribute_id: row for row in evaluation.rows}
    assert rows["p_value"].gold_is_valid and rows["p_value"].human_extraction == 0.05
    assert rows["p_value"].llm_extraction == 0.05
    assert rows["effect"].human_extraction == -0.5
    assert all(row.match_status is MatchStatus.EXACT_MATCH for row in rows.values())
    assert all(row.gold_value_in_context for row in rows.values())
    assert result_of(evaluation, "p_value").counts["n_invalid_gold"] == 0
    assert result_of(evaluation, "p_value").metrics["accuracy"] == 1.0


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("p < .05", [0.05]),
        ("fell by -.5 points", [-0.5]),
        ("(.35)", [0.35]),
        ("x.5 and 1..2", [1.0]),  # glued to a word or a separator: not a number on its own
        ("10,000 and .5", [0.5, 10000.0]),
    ],
)
def test_text_search_reads_leading_dot_decimals(text, numbers):
    assert read_numbers(text, "en") == numbers


def test_under_the_de_format_a_leading_comma_is_the_decimal():
    assert read_numbers("p < ,05", "de") == [0.05]
    assert read_numbers("p < .05", "de") == []


@pytest.mark.parametrize("value", [0.05, -0.5, 0.35])
def test_a_leading_dot_decimal_is_found_in_a_text(value):
    text = "values .05, -.5 and (.35) were seen"
    assert SearchableText(text, "en").contains_number(value, 1e-9)
    assert SearchableText(text + " and so on" * 30, "en").contains_number(value, 1e-9)
