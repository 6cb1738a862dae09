"""Comparison rows: one per gold document x attribute with a prompt, in a fixed order, every column."""

import dataclasses

import pytest

from metrics.engine.attributes.types import (
    COMPARISON_COLUMNS,
    AttributeType,
    EvaluationSettings,
    MatchStatus,
)
from tests.engine.attributes.test_support import compare_documents, evaluate, gold, predicted, spec

BOOL, STRING, INTEGER, FLOAT = (
    AttributeType.BOOL,
    AttributeType.STRING,
    AttributeType.INTEGER,
    AttributeType.FLOAT,
)

CONTEXT = "A randomised trial of 1,250 adults with type 2 diabetes in Leeds. Mean age 54.3 years."
SCHEMA = [
    spec("randomised", BOOL),
    spec("city", STRING),
    spec("n_enrolled", INTEGER),
    spec("mean_age", FLOAT),
]


def row_of(evaluation, document_id, attribute_id):
    return next(r for r in evaluation.rows if r.document_id == document_id and r.attribute_id == attribute_id)


def test_rows_come_in_gold_document_order_then_attribute_order():
    documents = [gold(d, {"city": "Leeds"}) for d in ("d3", "d1", "d2")]
    evaluation = evaluate(SCHEMA, documents, [predicted("d1", {}), predicted("d2", {}), predicted("d3", {})])
    assert [(r.document_id, r.attribute_id) for r in evaluation.rows] == [
        (d, a.attribute_id) for d in ("d3", "d1", "d2") for a in SCHEMA
    ]


def test_every_row_carries_the_20_export_columns():
    evaluation = evaluate(SCHEMA, [gold("d1", {"city": "Leeds"})], [predicted("d1", {"city": "Leeds"})])
    fields = {field.name for field in dataclasses.fields(evaluation.rows[0])}
    assert set(COMPARISON_COLUMNS) <= fields


def test_attributes_without_a_prompt_are_listed_not_scored():
    schema = [*SCHEMA, spec("notes", STRING, prompt="  ")]
    evaluation = evaluate(schema, [gold("d1", {"notes": "x", "city": "Leeds"})], [predicted("d1", {})])
    assert "1 attribute(s) have no prompt and are not scored: 'notes'" in evaluation.warnings
    assert "notes" not in {r.attribute_id for r in evaluation.rows}
    assert [result.spec.attribute_id for result in evaluation.attributes] == [a.attribute_id for a in SCHEMA]


def test_a_document_with_no_gold_at_all_is_listed_not_scored():
    documents = [
        gold("coded", {"city": "Leeds"}),
        gold("uncoded", {}),
        gold("elsewhere", {"unknown_attribute": 1}),
    ]
    evaluation = evaluate(SCHEMA, documents, [predicted("coded", {})])
    assert evaluation.unscored_documents == ["uncoded", "elsewhere"]
    assert {r.document_id for r in evaluation.rows} == {"coded"}
    assert any("uncoded" in warning for warning in evaluation.warnings)


def test_an_absent_gold_attribute_takes_its_missing_default_and_is_not_present():
    schema = [*SCHEMA, spec("arms", INTEGER, missing_default=2)]
    evaluation = evaluate(schema, [gold("d1", {"city": "Leeds"})], [predicted("d1", {})])
    assert row_of(evaluation, "d1", "city").attribute_presence is True
    absent = {a: row_of(evaluation, "d1", a) for a in ("randomised", "n_enrolled", "mean_age", "arms")}
    assert [absent[a].human_extraction for a in absent] == [False, 0, 0.0, 2]
    assert not any(row.attribute_presence for row in absent.values())


def test_eppi_bool_gold_is_true_when_the_code_exists():
    evaluation = evaluate(
        SCHEMA, [gold("d1", {"randomised": True})], [predicted("d1", {"randomised": "yes"})]
    )
    row = row_of(evaluation, "d1", "randomised")
    assert (row.human_extraction, row.llm_extraction, row.is_correct) == (True, True, True)


def test_bool_rows_have_no_source_checks_or_match_status():
    evaluation = evaluate(
        SCHEMA, [gold("d1", {"randomised": True})], [predicted("d1", {"randomised": False}, context=CONTEXT)]
    )
    row = row_of(evaluation, "d1", "randomised")
    assert (row.gold_value_in_context, row.gold_value_in_citation, row.match_status) == (None, None, None)
    assert row.is_correct is False


@pytest.mark.parametrize(
    ("prediction", "reason"),
    [
        (None, "no prediction was posted"),
        (predicted("d1", {"city": "Leeds"}, status="failed", error="timeout"), "extraction failed"),
        (predicted("d1", {"n_enrolled": 1250}), "no value for this attribute"),
        (predicted("d1", {"city": None}), "returned null"),
    ],
)
def test_a_missing_prediction_says_why(prediction, reason):
    evaluation = evaluate(SCHEMA, [gold("d1", {"city": "Leeds"})], [prediction] if prediction else [])
    row = row_of(evaluation, "d1", "city")
    assert row.llm_extraction is None
    assert row.match_status is MatchStatus.MISSING_PREDICTION
    assert reason in row.llm_reasoning
    assert row.is_correct is None


def test_failed_extraction_keeps_its_error_in_the_reasoning():
    prediction = predicted("d1", {"city": "Leeds"}, status="failed", error="timeout after 60 s")
    evaluation = evaluate(SCHEMA, [gold("d1", {"city": "Leeds"})], [prediction])
    assert "timeout after 60 s" in row_of(evaluation, "d1", "city").llm_reasoning


def test_duplicate_predictions_are_missing_with_the_reason():
    prediction = predicted("d1", [("city", "Leeds"), ("city", "York")])
    evaluation = evaluate(SCHEMA, [gold("d1", {"city": "Leeds"})], [prediction])
    row = row_of(evaluation, "d1", "city")
    assert row.llm_extraction is None
    assert row.match_status is MatchStatus.MISSING_PREDICTION
    assert "2 values" in row.llm_reasoning and "'York'" in row.llm_reasoning
    assert any("'d1'" in w and "'city'" in w and "2 values" in w for w in evaluation.warnings)


def test_an_invalid_prediction_is_missing_with_the_reason_in_reasoning_and_warnings():
    evaluation = evaluate(
        SCHEMA, [gold("d1", {"n_enrolled": 1250})], [predicted("d1", {"n_enrolled": "many"})]
    )
    row = row_of(evaluation, "d1", "n_enrolled")
    assert row.llm_extraction is None
    assert "invalid predicted value" in row.llm_reasoning and "'many'" in row.llm_reasoning
    assert "I read the n_enrolled" in row.llm_reasoning
    assert any("'d1'" in w and "'n_enrolled'" in w and "'many'" in w for w in evaluation.warnings)


def test_an_unparseable_gold_number_is_invalid_gold_never_0():
    evaluation = evaluate(
        SCHEMA, [gold("d1", {"n_enrolled": "about 1250"})], [predicted("d1", {"n_enrolled": 0})]
    )
    row = row_of(evaluation, "d1", "n_enrolled")
    assert row.human_extraction == "about 1250"
    assert row.match_status is MatchStatus.INVALID_GOLD
    assert row.gold_is_valid is False and row.is_correct is None
    assert any("'d1'" in w and "'n_enrolled'" in w and "'about 1250'" in w for w in evaluation.warnings)


def test_invalid_bool_gold_is_marked_too():
    evaluation = evaluate(
        SCHEMA, [gold("d1", {"randomised": "probably"})], [predicted("d1", {"randomised": True})]
    )
    assert row_of(evaluation, "d1", "randomised").match_status is MatchStatus.INVALID_GOLD


@pytest.mark.parametrize(
    ("gold_city", "predicted_city", "context", "status"),
    [
        ("Leeds", "Leeds", CONTEXT, MatchStatus.EXACT_MATCH),
        ("Leeds", "leeds ", CONTEXT, MatchStatus.NEAR_MATCH),
        ("Leeds", "York", CONTEXT, MatchStatus.EXTRACTION_ERROR_GOOD_SOURCE),
        ("Bradford", "York", CONTEXT, MatchStatus.EXTRACTION_ERROR_BAD_SOURCE),
        ("Leed", "Leeds", CONTEXT, MatchStatus.EXTRACTION_ERROR_BAD_SOURCE),
    ],
)
def test_string_match_status_takes_the_first_rule_that_holds(gold_city, predicted_city, context, status):
    evaluation = evaluate(
        SCHEMA,
        [gold("d1", {"city": gold_city})],
        [predicted("d1", {"city": predicted_city}, context=context)],
    )
    assert row_of(evaluation, "d1", "city").match_status is status


def test_numbers_have_no_near_match():
    evaluation = evaluate(
        SCHEMA,
        [gold("d1", {"n_enrolled": "1,250", "mean_age": 54.3})],
        [predicted("d1", {"n_enrolled": 1251, "mean_age": "54.3"}, context=CONTEXT)],
    )
    assert row_of(evaluation, "d1", "n_enrolled").match_status is MatchStatus.EXTRACTION_ERROR_GOOD_SOURCE
    assert row_of(evaluation, "d1", "n_enrolled").gold_value_in_context is True
    assert row_of(evaluation, "d1", "mean_age").match_status is MatchStatus.EXACT_MATCH


def test_gold_in_context_is_searched_in_the_context_the_model_read():
    document = gold("d1", {"city": "Leeds"}, text="The gold text mentions York only.")
    evaluation = evaluate(SCHEMA, [document], [predicted("d1", {"city": "York"}, context=CONTEXT)])
    assert row_of(evaluation, "d1", "city").gold_value_in_context is True


def test_gold_in_citation_searches_additional_text_and_highlights_with_near_windows():
    document = gold(
        "d1",
        {"city": "Leeds", "n_enrolled": 1250},
        additional_text={"city": "recruited in leeds"},
        details={
            "n_enrolled": ['Page 2:\n[¬s]"1,250 adults"[¬e]'],
            "city": ["Page 1:\n[¬s]Leedss hospital[¬e]"],
        },
    )
    evaluation = evaluate(SCHEMA, [document], [predicted("d1", {})])
    assert row_of(evaluation, "d1", "city").gold_value_in_citation is True
    assert row_of(evaluation, "d1", "n_enrolled").gold_value_in_citation is True
    # The page marker of the raw detail is not a number in the citation.
    paged = gold("d2", {"n_enrolled": 2}, details={"n_enrolled": ["Page 2:\n[¬s]two arms[¬e]"]})
    evaluation = evaluate(SCHEMA, [paged], [predicted("d2", {})])
    assert row_of(evaluation, "d2", "n_enrolled").gold_value_in_citation is False


def test_a_citation_search_is_answered_for_its_attribute_type_whatever_was_searched_before():
    # The same gold number and citation text under FLOAT (within the relative tolerance, 1 %) and
    # under INTEGER (exact), document after document: each row gets its own type's answer.
    schema = [spec("n_float", FLOAT), spec("n_integer", INTEGER)]
    values = {"n_float": 100, "n_integer": 100}
    texts = {attribute_id: "100.5 participants" for attribute_id in values}
    documents = [gold(f"d{index}", values, additional_text=texts) for index in range(3)]
    evaluation = evaluate(
        schema,
        documents,
        [predicted(f"d{index}", {}) for index in range(3)],
        float_relative_tolerance=0.01,
    )
    for index in range(3):
        assert row_of(evaluation, f"d{index}", "n_float").gold_value_in_citation is True
        assert row_of(evaluation, f"d{index}", "n_integer").gold_value_in_citation is False


def test_near_matches_count_in_citations_but_not_in_context():
    document = gold(
        "d1", {"city": "Leeds Royal Infirmary"}, additional_text={"city": "at the Leeds Royal Infirmery"}
    )
    context = "at the Leeds Royal Infirmery"
    evaluation = evaluate(SCHEMA, [document], [predicted("d1", {"city": "Leeds"}, context=context)])
    row = row_of(evaluation, "d1", "city")
    assert (row.gold_value_in_citation, row.gold_value_in_context) == (True, False)


def test_citation_and_verbatim_columns_are_filled():
    document = gold(
        "d1",
        {"city": "Leeds"},
        additional_text={"city": "trial of 1,250 adults"},
        details={"city": ['Page 7:\n[¬s]"in Leeds"[¬e]']},
    )
    prediction = predicted("d1", {"city": "Leeds"}, context=CONTEXT, verbatim={"city": "diabetes in Leeds"})
    row = row_of(evaluate(SCHEMA, [document], [prediction]), "d1", "city")
    assert row.human_additional_text == "trial of 1,250 adults"
    assert row.item_attribute_full_text_details == 'Page 7:\n[¬s]"in Leeds"[¬e]'
    assert (row.citation_page, row.citation_highlight_text) == ("7", "in Leeds")
    assert row.llm_verbatim_text == "diabetes in Leeds"
    assert row.human_verbatim_fuzzy_match_pct == 100.0
    assert row.llm_verbatim_fuzzy_match_pct == 100.0
    assert row.llm_reasoning == "I read the city"
    assert (row.extraction_run_id, row.document_name, row.attribute_label) == ("run-1", "Paper d1", "City")


def test_list_and_dict_compare_by_equality():
    schema = [spec("arms", AttributeType.LIST), spec("doses", AttributeType.DICT)]
    evaluation = evaluate(
        schema,
        [gold("d1", {"arms": ["a", "b"], "doses": {"a": 1}})],
        [predicted("d1", {"arms": ["a", "b"], "doses": {"a": 2}})],
    )
    assert [r.is_correct for r in evaluation.rows] == [True, False]
    assert [r.match_status for r in evaluation.rows] == [None, None]


def test_a_null_gold_value_is_left_out():
    schema = [spec("city", STRING, missing_default=None)]
    evaluation = evaluate(schema, [gold("d1", {"other": 1}), gold("d2", {"city": "Leeds"})], [])
    assert evaluation.unscored_documents == ["d1"]
    evaluation = evaluate(
        [*schema, spec("other", INTEGER)], [gold("d1", {"other": 1})], [predicted("d1", {"city": "x"})]
    )
    row = row_of(evaluation, "d1", "city")
    assert (row.human_extraction, row.match_status, row.is_correct) == (None, None, None)


def test_predictions_for_unknown_attributes_are_reported_and_unknown_documents_left_out():
    # Documents outside the gold are reported where they come in: the offline readers refuse them,
    # the server notes posted ones (services/results.py); the comparison gives them no row.
    evaluation = evaluate(
        SCHEMA, [gold("d1", {"city": "Leeds"})], [predicted("d1", {"colour": "red"}), predicted("d9", {})]
    )
    assert any("'colour'" in w for w in evaluation.warnings)
    assert {row.document_id for row in evaluation.rows} == {"d1"}


def test_the_order_of_the_predictions_mapping_changes_nothing():
    documents = [gold(f"d{i}", {"city": "Leeds", "n_enrolled": i}) for i in range(5)]
    predictions = [
        predicted(f"d{i}", {"city": "Leeds" if i % 2 else "York", "n_enrolled": i}, context=CONTEXT)
        for i in range(5)
    ]
    forward = evaluate(SCHEMA, documents, predictions)
    backward = evaluate(SCHEMA, documents, list(reversed(predictions)))
    assert forward.rows == backward.rows
    assert forward.attributes == backward.attributes
    assert forward.warnings == backward.warnings


def test_chunks_of_documents_give_the_rows_of_the_whole():
    documents = [gold(f"d{i}", {"city": "Leeds"}) for i in range(6)]
    predictions = {f"d{i}": predicted(f"d{i}", {"city": "Leeds"}) for i in range(6)}
    settings = EvaluationSettings()
    whole, _ = compare_documents(
        run_id="r", attributes=SCHEMA, gold_documents=documents, predictions=predictions, settings=settings
    )
    chunked = []
    for start in range(0, 6, 4):
        rows, _ = compare_documents(
            run_id="r",
            attributes=SCHEMA,
            gold_documents=documents[start : start + 4],
            predictions=predictions,
            settings=settings,
        )
        chunked.extend(rows)
    assert chunked == whole


def test_a_repeated_attribute_id_is_an_error():
    with pytest.raises(ValueError, match="city"):
        evaluate([*SCHEMA, spec("city", STRING)], [gold("d1", {"city": "a"})], [])


def test_a_duplicated_gold_document_is_an_error():
    with pytest.raises(ValueError, match="appears twice"):
        evaluate(SCHEMA, [gold("d1", {"city": "a"}), gold("d1", {"city": "b"})], [])


@pytest.mark.parametrize(
    "bad_settings",
    [{"number_format": "fr"}, {"edit_distance_match_threshold": 1.5}, {"float_relative_tolerance": -1.0}],
)
def test_unusable_settings_are_refused(bad_settings):
    with pytest.raises(ValueError):
        evaluate(SCHEMA, [gold("d1", {"city": "a"})], [], **bad_settings)
